// The online workload as a gpreemptd client (gpreempt-workload online --hint [SOCKET]): each
// request's begin/end, and with early hints an expect before its pre-processing, sent through
// lib/client's HintClient — the same client a real service uses through the C ABI or
// gpreempt.online_request(), failing open the same way.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "client/hint_client.h"
#include "notifier.h"

namespace gpreempt::workloads {

class HintObserver final : public RequestObserver {
 public:
  explicit HintObserver(client::HintClient hints) : hints_(std::move(hints)) {}

  void request_expected(uint64_t request, int64_t in_us) override;
  void request_start(uint64_t request, int64_t monotonic_ns) override;
  void request_end(uint64_t request, int64_t monotonic_ns, int64_t latency_ns) override;

  // What the hints achieved (protected / unprotected requests, reconnects), for the --json result.
  client::HintStats stats() const;
  const std::string& socket() const { return hints_.path(); }

 private:
  // Starts come from the dispatching thread, ends from the completion waiter; one client carries
  // one message at a time.
  mutable std::mutex mu_;
  client::HintClient hints_;
};

// A client of gpreemptd at `socket` (empty: $GPREEMPT_SOCKET, else the default path). When the
// daemon answers, checks with hello that this process's hints count (else throws gpreempt::Error
// EPERM naming the socket and the daemon's reason: a misconfigured run should not pass for a
// protected one). When it does not, the workload runs and its requests fail open (counted, one
// warning on stderr), reconnecting when the daemon comes back. begin() returns once the daemon has
// accepted the request, so the request's kernels follow the daemon's decision, not race it.
std::unique_ptr<HintObserver> open_hint_client(const std::string& socket);

}  // namespace gpreempt::workloads
