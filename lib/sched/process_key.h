// How lib/sched names a process and a GPU.
//
// A long-running scheduler must never let a reused pid inherit a suspension, so a process is its
// pid plus its start time (/proc/PID/stat field 22, in clock ticks since boot; lib/discovery
// parses it). Two keys with the same pid and different start times are different processes.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace gpreempt::sched {

struct ProcessKey {
  int pid = 0;
  uint64_t start_time_ticks = 0;
  auto operator<=>(const ProcessKey&) const = default;
};

// "pid 1234 (started at tick 5678)" in messages; pid alone is ambiguous after reuse.
inline std::string to_string(const ProcessKey& k) {
  return std::to_string(k.pid) + "@" + std::to_string(k.start_time_ticks);
}

// KFD's gpu_id (topology nodes' gpu_id), the same number the rest of the project uses.
using GpuId = uint32_t;

}  // namespace gpreempt::sched
