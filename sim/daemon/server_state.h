// Server's private types and its log, shared by the server*.cpp files that implement it: a
// connection, a process the daemon follows, and the memory it shares with that process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/daemon/server.h"

namespace gpreempt::sim::daemon {

// One stderr line, stamped with the daemon's pid and the time.
void log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

struct Server::Conn {
  int fd = -1;
  uint64_t watch = 0;
  int peer_pid = 0;
  uid_t peer_uid = 0;
  // Pids this peer has been allowed to act as (peer_access.h): checked once per connection.
  std::vector<int> acts_as;
  int anchor_of = 0;  // pid whose anchor this is, 0 for request connections
  std::optional<CallToken> pending;
};

struct Server::Mapping {
  int memfd = -1;
  void* addr = nullptr;
  std::size_t bytes = 0;
  bool doorbell = false;
  uint32_t gpu_id = 0;
};

struct Server::Proc {
  int pid = 0;
  int pidfd = -1;
  uint64_t watch = 0;
  int anchor_fd = -1;
  bool client = false;   // said hello: keeps an on-demand daemon alive while it lives
  bool retired = false;  // its image is gone (exec); the device already forgot it
  std::map<uint64_t, Mapping> mappings;  // by mmap offset
};

}  // namespace gpreempt::sim::daemon
