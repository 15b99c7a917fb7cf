// Comparing two analyzed logs (`gpreempt log compare A B`) and the per-pid queue configuration
// the user's queue_finder produced as queue_config_pid_<pid>.py.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "logs/hip_log_analyzer.h"

namespace gpreempt::logs {

struct KernelDelta {
  std::string name;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

struct LogComparison {
  std::uint64_t hw_queues_a = 0, hw_queues_b = 0;
  std::uint64_t dispatches_a = 0, dispatches_b = 0;
  std::uint64_t barriers_a = 0, barriers_b = 0;
  std::uint64_t errors_a = 0, errors_b = 0;
  std::vector<std::uint64_t> hwq_only_a, hwq_only_b, hwq_common;  // by address
  std::vector<KernelDelta> kernels;  // every kernel of either log, with both counts
  std::vector<int> priorities_a, priorities_b;  // creation priorities, in creation order
};

LogComparison compare(const LogSummary& a, const LogSummary& b);

// HW queues of one process (all queues when the log prints no pid): what a preemption tool needs
// to find them again (address, read-pointer address = HWq + 0x80, ROCr ids, priority).
struct QueueConfigEntry {
  std::uint64_t hwq = 0;
  std::uint64_t rptr_address = 0;
  std::vector<std::uint64_t> ids;
  std::vector<std::uint64_t> sw_queues;
  std::optional<int> priority;
  std::optional<std::uint64_t> size;
  std::uint64_t dispatches = 0;
};
struct QueueConfig {
  std::optional<int> pid;
  std::vector<QueueConfigEntry> queues;
};

// One config per process seen (or only `pid` when given).
std::vector<QueueConfig> queue_configs(const LogSummary& s, std::optional<int> pid = std::nullopt);

}  // namespace gpreempt::logs
