// What the daemon accounts per GPU beyond the Runtime's figures (sched::RuntimeSnapshot): its
// capability, the actuator's failures and ioctl latency, the last priority ranking and the
// request latency in the metrics' histogram buckets.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "metrics/metrics_snapshot.h"
#include "sched/action.h"
#include "sched/latency_histogram.h"
#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreemptd {

struct GpuRecord {
  std::string name;  // "gfx942"
  bool can_suspend = true;
  std::string reason;                                                  // why not
  std::optional<gpreempt::sched::action::PriorityOnly> priority_only;  // the last ranking, if any

  // The requests of each class on this GPU (sched::RequestDone) in the Prometheus histogram's
  // buckets: the metrics' rendering of what the Runtime's RequestTally counts.
  std::map<std::string, gpreemptd::Histogram> class_latency;
  uint64_t suspend_failures = 0, suspend_timeouts = 0, resume_failures = 0, resume_timeouts = 0;
  gpreemptd::Histogram ioctl_latency = gpreemptd::Histogram::suspend_latency();
};

}  // namespace gpreemptd
