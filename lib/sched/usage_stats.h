// What the scheduler did to one process, or to one class summed over its processes.
#pragma once

#include <cstdint>

#include "sched/latency_histogram.h"
#include "sched/time.h"

namespace gpreempt::sched {

struct UsageStats {
  uint64_t suspensions = 0;           // a target's queues on one GPU suspended (per GPU)
  uint64_t forced_resumes = 0;        // by the hard bound or the starvation guard
  uint64_t failed_actuations = 0;     // suspend or resume failed (errno)
  uint64_t timed_out_actuations = 0;  // preemption timed out (bit 30)
  Duration suspended_time{0};
  // The part of the two above made by operator commands alone (`gpreempt ctl suspend`).
  uint64_t operator_suspensions = 0;
  Duration operator_suspended_time{0};
  uint64_t requests_ignored = 0;     // from a source the class does not accept
  uint64_t requests_aborted = 0;     // the process exited mid-request
  LatencyHistogram request_latency;  // online requests, start to finish
};

}  // namespace gpreempt::sched
