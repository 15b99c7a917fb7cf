#include "hint_observer.h"

#include <cerrno>
#include <mutex>

#include "client/connection.h"
#include "common/error.h"

namespace gpreempt::workloads {

namespace {

class HintClient final : public RequestObserver {
 public:
  explicit HintClient(client::Connection c) : conn_(std::move(c)) {}

  // Request ids start at 0 in the runner; the protocol's start at 1.
  void request_expected(uint64_t, int64_t in_us) override {
    std::lock_guard lk(mu_);
    conn_.expect(in_us);
  }
  void request_start(uint64_t request, int64_t) override {
    std::lock_guard lk(mu_);
    conn_.begin(request + 1);
  }
  void request_end(uint64_t request, int64_t, int64_t) override {
    std::lock_guard lk(mu_);
    conn_.end(request + 1);
  }

 private:
  // Starts come from the dispatching thread, ends from the completion waiter; one connection
  // carries one message at a time.
  std::mutex mu_;
  client::Connection conn_;
};

}  // namespace

std::unique_ptr<RequestObserver> open_hint_client(const std::string& socket) {
  auto conn = client::Connection::connect(socket);
  const auto hello = conn.hello();
  // "may_preempt" is the daemon's key, "hints_count" the client library's name for it.
  const auto& r = hello.raw;
  const bool counts = r.contains("may_preempt") && r["may_preempt"].is_boolean()
                          ? r["may_preempt"].get<bool>()
                          : hello.hints_count;
  if (!counts) {
    std::string why = r.contains("reason") && r["reason"].is_string()
                          ? r["reason"].get<std::string>()
                          : "the daemon ignores this process's hints";
    throw Error(EPERM, "--hint " + conn.path() + ": " + why);
  }
  return std::make_unique<HintClient>(std::move(conn));
}

}  // namespace gpreempt::workloads
