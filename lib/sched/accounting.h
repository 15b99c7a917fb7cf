// What the scheduler did, per process and per class: the figures `gpreempt ctl status`, the
// metrics endpoint and the evaluation report. Totals of a class survive its processes' exit.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sched/latency_histogram.h"
#include "sched/process_key.h"
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

class Accounting {
 public:
  void bind(const ProcessKey& key, const std::string& class_name);
  void forget(const ProcessKey& key);

  // Each updates the process (if known) and its class.
  void suspended(const ProcessKey& key, bool by_operator = false);
  void resumed(const ProcessKey& key, Duration was_suspended, bool forced,
               bool by_operator = false);
  void actuation_failed(const ProcessKey& key, bool timed_out);
  void request_done(const ProcessKey& key, Duration latency);
  void request_ignored(const ProcessKey& key);
  void request_aborted(const ProcessKey& key);

  const std::map<ProcessKey, UsageStats>& processes() const { return processes_; }
  const std::map<std::string, UsageStats>& classes() const { return classes_; }
  // Requests from processes with no class, or a key that is not (or no longer) known.
  uint64_t unknown_requests() const { return unknown_requests_; }
  void unknown_request() { ++unknown_requests_; }

 private:
  template <class F>
  void both(const ProcessKey& key, F f);

  std::map<ProcessKey, UsageStats> processes_;
  std::map<ProcessKey, std::string> class_of_;
  std::map<std::string, UsageStats> classes_;
  uint64_t unknown_requests_ = 0;
};

}  // namespace gpreempt::sched
