// The arbiter of one GPU: tracks the processes on it, asks the policy (priority_policy.h) what to
// do, and carries the asynchronous actuation through — at most one Suspend or Resume of this GPU
// in flight; a target counts as suspended only once its completion says so. An 8-GPU node is
// eight independent arbiters: a failure, timeout or back-off here never touches another GPU.
//
// State machine of the GPU:
//   idle ──decide: targets to suspend──▶ suspending ──ActuationCompleted──▶ idle (targets done →
//   suspended; failed / timed out → a recovery Resume of those targets and a back-off)
//   idle ──decide: targets to resume──▶ resuming ──ActuationCompleted──▶ idle
//   Decisions wait while an action is in flight and are taken again on its completion, so each
//   decision issues one Suspend batching every target of the GPU.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/accounting.h"
#include "sched/action.h"
#include "sched/arbiter_config.h"
#include "sched/event.h"
#include "sched/flap_coalescer.h"
#include "sched/gpu_member.h"
#include "sched/grace_estimator.h"
#include "sched/sched_class.h"

namespace gpreempt::sched {

// Where arbiters put their actions; action ids are unique across the scheduler.
struct ActionSink {
  std::vector<Action> actions;
  uint64_t next_id = 1;
};

struct GpuStats {
  uint64_t suspend_actions = 0;
  uint64_t resume_actions = 0;
  uint64_t failed_targets = 0;
  uint64_t timed_out_targets = 0;
  uint64_t stale_completions = 0;  // completions of no action in flight (ignored)
  uint64_t flaps = 0;  // request suspends within the hysteresis of an idle resume (flap_coalescer.h)
};

class GpuArbiter {
 public:
  GpuArbiter(GpuId gpu, const ArbiterConfig& config, Accounting& accounting);

  GpuId gpu() const { return gpu_; }
  void set_capability(bool can_suspend, std::string reason);
  bool can_suspend() const { return can_suspend_; }

  // Adds the process, or updates its class and the protection its requests get.
  void join(const ProcessKey& key, const SchedClass& cls, Protection protection);
  // The protection of the members of class `cls` (its objective's controller moved).
  void set_protection(const std::string& cls, Protection protection);
  // When the process's first open request is or becomes late (late_by_request members; nullopt:
  // none is).
  void set_late_at(const ProcessKey& key, std::optional<Time> at);
  // The process left this GPU or exited: forgotten (a suspended one needs no resume).
  void leave(const ProcessKey& key, Time now);
  bool has(const ProcessKey& key) const { return members_.count(key) != 0; }

  void request_started(const ProcessKey& key, Time now);
  void request_finished(const ProcessKey& key, Time now);
  void request_expected(const ProcessKey& key, Time expected_at);
  void kernel_observed(const ProcessKey& key, Duration length);
  // An operator command: hold the member suspended until `until` / end that hold at `now`.
  // False when the process is not a member of this GPU.
  bool operator_hold(const ProcessKey& key, Time until);
  bool operator_release(const ProcessKey& key, Time now);

  void completed(const event::ActuationCompleted& e, Time now, ActionSink& out);
  // Decide and act (nothing while an action is in flight).
  void step(Time now, ActionSink& out);
  // Resume everything suspended or being suspended; suspend nothing any more.
  void shutdown(ActionSink& out);

  std::optional<Time> next_check() const { return next_check_; }
  const std::map<ProcessKey, GpuMember>& members() const { return members_; }
  bool in_flight() const { return in_flight_.has_value(); }
  std::optional<Time> backoff_until() const { return backoff_until_; }
  const GpuStats& stats() const { return stats_; }
  // The idle hysteresis every member has at least now (flap coalescing; 0: their own).
  Duration coalesced_hysteresis() const { return flaps_.floor(); }
  Duration current_grace() const { return grace_.grace(config_); }

 private:
  struct InFlight {
    uint64_t id = 0;
    bool suspend = true;
    std::map<ProcessKey, ResumeReason> targets;  // the reason only matters for resumes
    std::set<ProcessKey> by_operator;            // suspends only: held by an operator alone
    // Resumes only: each target's operator hold when the resume was decided. A command that
    // changes it while the resume is in flight is a new hold, which the completion keeps.
    std::map<ProcessKey, std::optional<Time>> operator_until;
  };
  void emit_resume(const std::vector<std::pair<ProcessKey, ResumeReason>>& targets,
                   ResumeReason reason, ActionSink& out);
  void emit_priorities(ActionSink& out);

  GpuId gpu_;
  const ArbiterConfig& config_;
  Accounting& accounting_;
  bool can_suspend_ = true;
  std::string no_suspend_reason_;
  bool priorities_dirty_ = false;
  bool stopped_ = false;
  std::map<ProcessKey, GpuMember> members_;
  std::optional<InFlight> in_flight_;
  std::optional<Time> backoff_until_;
  std::optional<Time> next_check_;
  GraceEstimator grace_;
  FlapCoalescer flaps_;
  GpuStats stats_;
};

}  // namespace gpreempt::sched
