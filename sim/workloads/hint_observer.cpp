#include "hint_observer.h"

#include <cerrno>

#include "common/error.h"

namespace gpreempt::workloads {

// Request ids start at 0 in the runner; the protocol's start at 1.
void HintObserver::request_expected(uint64_t, int64_t in_us) {
  std::lock_guard lk(mu_);
  hints_.expect(in_us);
}

void HintObserver::request_start(uint64_t request, int64_t) {
  std::lock_guard lk(mu_);
  hints_.begin(request + 1);
}

void HintObserver::request_end(uint64_t request, int64_t, int64_t) {
  std::lock_guard lk(mu_);
  hints_.end(request + 1);
}

client::HintStats HintObserver::stats() const {
  std::lock_guard lk(mu_);
  return hints_.stats();
}

std::unique_ptr<HintObserver> open_hint_client(const std::string& socket) {
  client::HintClientOptions o;
  o.path = socket;
  client::HintClient hints(std::move(o));
  if (hints.connected()) {
    const auto hello = hints.call([](client::Connection& c) { return c.hello(); });
    if (!hello.may_preempt) {
      throw Error(EPERM, "--hint " + hints.path() + ": " +
                             (hello.reason.empty() ? "the daemon ignores this process's hints"
                                                   : hello.reason));
    }
  }
  return std::make_unique<HintObserver>(std::move(hints));
}

}  // namespace gpreempt::workloads
