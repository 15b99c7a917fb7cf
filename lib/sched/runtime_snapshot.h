// What the scheduling runtime did up to one instant, as plain values: the one source from which
// gpreemptd's status document and metrics and the evaluation's rows render the scheduler's
// figures — how often and how long it suspended whom (per GPU, class and process, the actuator's
// answers, ongoing suspensions counted up to the instant), its arbiters' action counts, the
// requests it saw and what it accounted per class. Live state (who holds which GPU now, the grace
// in force, objectives) is read from the Scheduler itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/gpu_arbiter.h"
#include "sched/gpu_suspensions.h"
#include "sched/process_key.h"
#include "sched/request_tally.h"
#include "sched/time.h"
#include "sched/usage_stats.h"

namespace gpreempt::sched {

struct RuntimeSnapshot {
  using Share = GpuSuspensionTally::Share;
  struct Gpu {
    uint64_t suspensions = 0;                // targets a suspend completed for (the arbiter's)
    Duration suspended{0};                   // every suspension, the ongoing ones up to `at`
    std::vector<ProcessKey> suspended_now;   // whose queues are suspended now
    std::map<std::string, Share> by_class;   // surviving its processes; "" for none
    std::map<ProcessKey, Share> by_process;  // live processes only
    GpuStats actions;                        // its arbiter's (none: zero)
    GpuRequests requests;
  };

  Time at{0};
  std::map<GpuId, Gpu> gpus;
  std::map<std::string, UsageStats> classes;  // the Accounting's, per class
  uint64_t unknown_requests = 0;
  uint64_t recoveries = 0;  // resumes of orphans issued

  // `id`'s figures; all zero for a GPU nothing happened on.
  const Gpu& gpu(GpuId id) const;

  // Summed over the GPUs.
  uint64_t suspensions() const;
  Duration suspended() const;
  uint64_t flaps() const;
};

}  // namespace gpreempt::sched
