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
  if (!hello.may_preempt) {
    throw Error(EPERM, "--hint " + conn.path() + ": " +
                           (hello.reason.empty() ? "the daemon ignores this process's hints"
                                                 : hello.reason));
  }
  return std::make_unique<HintClient>(std::move(conn));
}

}  // namespace gpreempt::workloads
