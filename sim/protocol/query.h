// One request/reply exchange with a machine's daemon on a fresh connection: what kfdsim, the
// tools that report simulated timings, and the tests ask the daemon (status, queues, GPU stats).
// The shim does not use it: its requests travel on the process's own connections.
#pragma once

#include <cstdint>
#include <string>

#include "sim/protocol/messages.h"

namespace gpreempt::sim::protocol {

struct QueryResult {
  int error = 0;    // 0, or -errno of the transport (no daemon answers: -ENOENT/-ECONNREFUSED)
  int64_t ret = 0;  // the daemon's answer when error == 0
  std::string payload;
};

// For kShutdown it also waits until the daemon has closed the connection, i.e. has exited.
QueryResult query(const std::string& socket_path, Op op, uint64_t arg = 0);

}  // namespace gpreempt::sim::protocol
