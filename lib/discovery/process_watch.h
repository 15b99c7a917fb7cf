// What changed between two looks at the GPU processes: processes that appeared or exited, queues
// created or destroyed. Pure (snapshots in, events out); `gpreempt watch` takes the snapshots.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "discovery/process_discovery.h"

namespace gpreempt::discovery {

struct WatchEvent {
  std::string kind;  // "process_started", "process_exited", "queue_created", "queue_destroyed"
  int pid = 0;
  std::optional<int> container_pid;
  std::optional<std::uint32_t> queue_id;
  std::optional<std::uint32_t> gpu_id;
  std::string queue_type;
  std::vector<std::string> cmdline;  // process events
};

// Events turning `before` into `after` (both as returned by gpu_processes): process exits first,
// then starts, then queue changes, each ordered by pid and queue id.
std::vector<WatchEvent> diff_processes(const std::vector<ProcessInfo>& before,
                                       const std::vector<ProcessInfo>& after);

}  // namespace gpreempt::discovery
