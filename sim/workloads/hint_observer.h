// The online workload as a gpreemptd client (gpreempt-workload online --hint [SOCKET]): each
// request's begin/end, and with early hints an expect before its pre-processing, sent through
// lib/client — the same calls a real service makes through the C ABI or gpreempt.online_request().
#pragma once

#include <memory>
#include <string>

#include "notifier.h"

namespace gpreempt::workloads {

// Connects to gpreemptd at `socket` (empty: $GPREEMPT_SOCKET, else the default path) and checks
// with hello that this process's hints count. begin() returns once the daemon has accepted the
// request, so the request's kernels follow the daemon's decision, not race it.
// Throws gpreempt::Error naming the socket and the daemon's reason.
std::unique_ptr<RequestObserver> open_hint_client(const std::string& socket);

}  // namespace gpreempt::workloads
