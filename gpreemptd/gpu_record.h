// What the daemon accounts per GPU beyond the runtime's (the arbiter's state and the suspensions,
// sched::Runtime): its capability, the actuator's failures and ioctl latency, and the online
// requests of its processes — figures of the status document and the metrics.
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
  std::string reason;        // why not
  // Requests of processes on this GPU, from every source, as the Runtime measured them
  // (sched::RequestDone).
  gpreempt::sched::LatencyHistogram online_latency;
  std::optional<gpreempt::sched::action::PriorityOnly> priority_only;  // the last ranking, if any

  // For the metrics: the same requests per class (surviving its processes) and per live process.
  std::map<std::string, uint64_t> requests_by_class;
  std::map<std::string, gpreemptd::Histogram> class_latency;
  std::map<gpreempt::sched::ProcessKey, uint64_t> requests_by_process;
  uint64_t suspend_failures = 0, suspend_timeouts = 0, resume_failures = 0, resume_timeouts = 0;
  gpreemptd::Histogram ioctl_latency = gpreemptd::Histogram::suspend_latency();
};

}  // namespace gpreemptd
