// What the daemon accounts per GPU beyond the arbiter's own state: its capability, suspensions
// that completed there and for how long, and the latency of online requests of its processes —
// the figures of the status document and the metrics.
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
  uint64_t suspensions = 0;  // targets whose queues on this GPU a suspend completed for
  gpreempt::sched::Duration suspended_total{0};  // ended suspensions
  std::map<gpreempt::sched::ProcessKey, gpreempt::sched::Time> suspended_since;  // ongoing ones
  gpreempt::sched::LatencyHistogram online_latency;  // hinted requests of processes on this GPU
  std::optional<gpreempt::sched::action::PriorityOnly> priority_only;  // the last ranking, if any

  // For the metrics: per class (surviving its processes) and per live process on this GPU.
  struct Tally {
    uint64_t suspensions = 0;
    gpreempt::sched::Duration suspended{0};
    uint64_t requests = 0;
  };
  std::map<std::string, Tally> by_class;
  std::map<std::string, gpreemptd::Histogram> class_latency;
  std::map<gpreempt::sched::ProcessKey, Tally> by_process;
  uint64_t suspend_failures = 0, suspend_timeouts = 0, resume_failures = 0, resume_timeouts = 0;
  gpreemptd::Histogram ioctl_latency = gpreemptd::Histogram::suspend_latency();

  gpreempt::sched::Duration suspended_total_at(gpreempt::sched::Time now) const {
    gpreempt::sched::Duration d = suspended_total;
    for (const auto& [key, since] : suspended_since) d += now - since;
    return d;
  }
};

}  // namespace gpreemptd
