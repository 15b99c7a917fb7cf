// What the scheduler did, per process and per class: the figures `gpreempt ctl status`, the
// metrics endpoint and the evaluation report. A process's figures are in its registry record
// (ProcessRecord::usage, gone with it); a class's totals survive its processes' exit.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sched/process_key.h"
#include "sched/process_registry.h"
#include "sched/usage_stats.h"
#include "sched/time.h"

namespace gpreempt::sched {

class Accounting {
 public:
  // The processes' figures live in `registry`'s records, which must outlive the Accounting.
  explicit Accounting(ProcessRegistry& registry) : registry_(registry) {}

  // From now on `key`'s figures count for `class_name` too (until it is bound again).
  void bind(const ProcessKey& key, const std::string& class_name);

  // Each updates the process (if bound) and its class.
  void suspended(const ProcessKey& key, bool by_operator = false);
  void resumed(const ProcessKey& key, Duration was_suspended, bool forced,
               bool by_operator = false);
  void actuation_failed(const ProcessKey& key, bool timed_out);
  void request_done(const ProcessKey& key, Duration latency);
  void request_ignored(const ProcessKey& key);
  void request_aborted(const ProcessKey& key);

  // A live process's figures (nullptr: unknown, or never bound to a class).
  const UsageStats* process(const ProcessKey& key) const;
  const std::map<std::string, UsageStats>& classes() const { return classes_; }
  // Requests from processes with no class, or a key that is not (or no longer) known.
  uint64_t unknown_requests() const { return unknown_requests_; }
  void unknown_request() { ++unknown_requests_; }

 private:
  template <class F>
  void both(const ProcessKey& key, F f);

  ProcessRegistry& registry_;
  std::map<std::string, UsageStats> classes_;
  uint64_t unknown_requests_ = 0;
};

}  // namespace gpreempt::sched
