// When to suspend and resume the offline job, as pure logic (DESIGN.md §1 lib/sched).
//
// The policy never reads a clock or sleeps: every event carries its time, and the driver (the
// demo controller, a daemon, a discrete-event benchmark) asks `next_deadline()` when to call
// `tick()` again. The actuator is injected, so the same policy runs against the real library,
// a test double, or a simulated GPU.
//
// Why the knobs exist (DESIGN.md §2): every suspend and every resume unmaps and remaps the whole
// runlist of the device, online queues included, so the policy must not flap — it keeps the
// offline job suspended across short gaps between online requests (`resume_after_idle`), and it
// bounds how long the offline job can be starved (`max_suspension`, then `min_offline_run` of
// guaranteed progress before the next suspend).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "sched/time.h"

namespace gpreempt::sched {

class OfflineActuator {
 public:
  virtual ~OfflineActuator() = default;
  // Suspend / resume every offline queue. 0 on success, a negative errno otherwise; the policy
  // records failures and keeps its state consistent with what really happened.
  virtual int suspend_offline() = 0;
  virtual int resume_offline() = 0;
};

struct PolicyConfig {
  Time resume_after_idle{std::chrono::milliseconds(2)};
  Time max_suspension{std::chrono::milliseconds(500)};
  Time min_offline_run{std::chrono::milliseconds(20)};
};

struct PolicyStats {
  uint64_t suspends = 0;
  uint64_t resumes = 0;
  uint64_t failed_suspends = 0;
  uint64_t failed_resumes = 0;
  uint64_t forced_resumes = 0;   // max_suspension reached while online work was still active
  uint64_t skipped_suspends = 0; // online work arrived inside min_offline_run
  Time suspended_total{0};
};

class PreemptionPolicy {
 public:
  PreemptionPolicy(PolicyConfig config, OfflineActuator& actuator);

  void online_request_started(Time now);
  void online_request_finished(Time now);
  // Resumes when the online side has been idle long enough, or the suspension is too old.
  void tick(Time now);
  // When `tick` has something to decide next, if anything.
  std::optional<Time> next_deadline() const;
  // Resume now whatever the state (shutdown, signal): never leave the offline job frozen.
  void release(Time now);

  bool offline_suspended() const { return suspended_; }
  int active_online_requests() const { return active_; }
  const PolicyStats& stats() const { return stats_; }

 private:
  void try_suspend(Time now);
  void do_resume(Time now, bool forced);

  PolicyConfig config_;
  OfflineActuator& actuator_;
  bool suspended_ = false;
  int active_ = 0;
  Time suspended_since_{0};
  Time idle_since_{0};
  std::optional<Time> resumed_at_;
  bool last_resume_forced_ = false;
  PolicyStats stats_;
};

}  // namespace gpreempt::sched
