#include "sched/gpu_arbiter.h"

#include <algorithm>
#include <set>

#include "sched/priority_policy.h"

namespace gpreempt::sched {

const char* to_string(MemberState s) {
  switch (s) {
    case MemberState::kRunning:
      return "running";
    case MemberState::kSuspending:
      return "suspending";
    case MemberState::kSuspended:
      return "suspended";
    case MemberState::kResuming:
      return "resuming";
  }
  return "?";
}

GpuArbiter::GpuArbiter(GpuId gpu, const ArbiterConfig& config, Accounting& accounting)
    : gpu_(gpu), config_(config), accounting_(accounting) {}

void GpuArbiter::set_capability(bool can_suspend, std::string reason) {
  if (can_suspend_ != can_suspend || no_suspend_reason_ != reason) priorities_dirty_ = true;
  can_suspend_ = can_suspend;
  no_suspend_reason_ = std::move(reason);
}

void GpuArbiter::join(const ProcessKey& key, const SchedClass& cls, Protection protection) {
  const Duration late = cls.objective ? late_after(*cls.objective) : Duration{0};
  auto [it, added] = members_.try_emplace(key);
  GpuMember& m = it->second;
  if (added) m.key = key;
  if (added || m.priority != cls.priority || m.class_name != cls.name) priorities_dirty_ = true;
  m.class_name = cls.name;
  m.priority = cls.priority;
  m.protection = protection;
  m.late_after = late;
  m.late_by_request = cls.objective && cls.objective->keyed_on_tokens();
}

void GpuArbiter::set_late_at(const ProcessKey& key, std::optional<Time> at) {
  if (auto it = members_.find(key); it != members_.end()) it->second.late_at = at;
}

void GpuArbiter::set_protection(const std::string& cls, Protection protection) {
  for (auto& [key, m] : members_)
    if (m.class_name == cls) m.protection = protection;
}

void GpuArbiter::leave(const ProcessKey& key, Time now) {
  auto it = members_.find(key);
  if (it == members_.end()) return;
  if (it->second.suspended_at)
    accounting_.resumed(key, now - *it->second.suspended_at, false, it->second.operator_suspension);
  members_.erase(it);
  priorities_dirty_ = true;
}

void GpuArbiter::request_started(const ProcessKey& key, Time now) {
  auto it = members_.find(key);
  if (it == members_.end()) return;
  GpuMember& m = it->second;
  if (m.active_requests++ == 0) m.busy_since = now;
  m.idle_since.reset();
  m.expect_from.reset();  // the announced request has come
  m.expect_until.reset();
}

void GpuArbiter::request_finished(const ProcessKey& key, Time now) {
  auto it = members_.find(key);
  if (it == members_.end() || it->second.active_requests == 0) return;
  GpuMember& m = it->second;
  if (--m.active_requests == 0) {
    m.idle_since = now;
    const auto late = late_from(m);
    m.last_request_late = late && now >= *late;
    m.busy_since.reset();
  }
}

void GpuArbiter::request_expected(const ProcessKey& key, Time expected_at) {
  auto it = members_.find(key);
  // Also while a request runs: the announced one is the next, and must not find the GPU resumed
  // by the end of this one (its begin clears the window, as for an idle process).
  if (it == members_.end()) return;
  it->second.expect_from = expected_at - config_.expect_lead;
  it->second.expect_until = expected_at + config_.expect_timeout;
}

bool GpuArbiter::operator_hold(const ProcessKey& key, Time until) {
  auto it = members_.find(key);
  if (it == members_.end()) return false;
  it->second.operator_until = until;
  return true;
}

bool GpuArbiter::operator_release(const ProcessKey& key, Time now) {
  auto it = members_.find(key);
  if (it == members_.end()) return false;
  GpuMember& m = it->second;
  if (m.operator_until && *m.operator_until > now) m.operator_until = now;
  return true;
}

void GpuArbiter::kernel_observed(const ProcessKey& key, Duration length) {
  auto it = members_.find(key);
  if (it == members_.end()) return;
  // Only kernels that a suspend on this GPU could interrupt tell us about the grace period.
  int top = it->second.priority;
  for (const auto& [k, m] : members_) top = std::max(top, m.priority);
  if (it->second.priority < top) grace_.observe(length);
}

void GpuArbiter::emit_resume(const std::vector<std::pair<ProcessKey, ResumeReason>>& targets,
                             ResumeReason reason, ActionSink& out) {
  action::Resume r;
  r.id = out.next_id++;
  r.gpu = gpu_;
  r.reason = reason;
  InFlight f{r.id, false, {}, {}, {}};
  for (const auto& [key, why] : targets) {
    r.targets.push_back(key);
    f.targets[key] = why;
    GpuMember& m = members_.at(key);
    m.state = MemberState::kResuming;
    f.operator_until[key] = m.operator_until;
  }
  in_flight_ = std::move(f);
  ++stats_.resume_actions;
  out.actions.emplace_back(std::move(r));
}

void GpuArbiter::emit_priorities(ActionSink& out) {
  // KFD queue priorities run 0..15: spread the distinct class priorities present over that range.
  std::set<int> levels;
  for (const auto& [k, m] : members_) levels.insert(m.priority);
  action::PriorityOnly p;
  p.gpu = gpu_;
  p.reason = no_suspend_reason_.empty() ? "debug-trap suspend unavailable" : no_suspend_reason_;
  p.reason += ": priority-only (queue priorities), no suspension on this GPU";
  for (const auto& [k, m] : members_) {
    int rank = static_cast<int>(std::distance(levels.begin(), levels.find(m.priority)));
    int n = static_cast<int>(levels.size());
    p.queue_priorities.emplace_back(k, n <= 1 ? 15 : rank * 15 / (n - 1));
  }
  out.actions.emplace_back(std::move(p));
}

void GpuArbiter::step(Time now, ActionSink& out) {
  next_check_.reset();
  // An announcement whose window passed without a request ends like a request does.
  for (auto& [k, m] : members_) {
    if (m.expect_until && *m.expect_until <= now && m.active_requests == 0) {
      m.idle_since = std::max(m.idle_since.value_or(*m.expect_until), *m.expect_until);
      m.expect_from.reset();
      m.expect_until.reset();
    }
  }
  if (!can_suspend_ && priorities_dirty_) {
    priorities_dirty_ = false;
    emit_priorities(out);
  }
  if (in_flight_) return;
  const bool backing_off = backoff_until_ && now < *backoff_until_;
  const bool suspends_allowed = can_suspend_ && !stopped_ && !backing_off;
  PolicyDecision d = decide(members_, now, config_, suspends_allowed, gpu_, flaps_.floor());
  next_check_ = d.next_check;
  if (backing_off && (!next_check_ || *backoff_until_ < *next_check_))
    next_check_ = *backoff_until_;

  if (!d.suspend.empty()) {
    action::Suspend s;
    s.id = out.next_id++;
    s.gpu = gpu_;
    s.targets = d.suspend;
    s.grace = grace_.grace(config_);
    s.reason = d.suspend_reason;
    InFlight f{s.id, true, {}, {d.by_operator.begin(), d.by_operator.end()}, {}};
    const bool for_request =
        s.reason == SuspendReason::kRequest || s.reason == SuspendReason::kExpected;
    std::vector<GpuMember*> targets;
    for (const auto& key : s.targets) {
      f.targets[key] = ResumeReason::kIdle;
      GpuMember& m = members_.at(key);
      m.state = MemberState::kSuspending;
      targets.push_back(&m);
    }
    if (for_request && flaps_.request_suspend(targets, now, config_)) ++stats_.flaps;
    in_flight_ = std::move(f);
    ++stats_.suspend_actions;
    out.actions.emplace_back(std::move(s));
    return;  // resumes wait for the suspend's completion: one action per GPU at a time
  }
  if (!d.resume.empty()) {
    ResumeReason reason = ResumeReason::kIdle;
    for (const auto& [k, why] : d.resume)
      if (why != ResumeReason::kIdle && reason == ResumeReason::kIdle) reason = why;
    emit_resume(d.resume, reason, out);
  }
}

void GpuArbiter::completed(const event::ActuationCompleted& e, Time now, ActionSink& out) {
  if (!in_flight_ || in_flight_->id != e.action) {
    ++stats_.stale_completions;
    return;
  }
  InFlight f = std::move(*in_flight_);
  in_flight_.reset();
  std::vector<std::pair<ProcessKey, ResumeReason>> recovery;
  for (const auto& [key, why] : f.targets) {
    auto mit = members_.find(key);
    if (mit == members_.end()) continue;  // exited meanwhile
    GpuMember& m = mit->second;
    event::TargetOutcome o{key, event::Outcome::kFailed, 0};  // no answer for it: not done
    for (const auto& x : e.outcomes)
      if (x.key == key) o = x;
    if (o.outcome == event::Outcome::kGone) {
      leave(key, now);
      continue;
    }
    const bool failed = o.outcome != event::Outcome::kDone;
    if (failed) {
      const bool timed_out = o.outcome == event::Outcome::kTimedOut;
      ++(timed_out ? stats_.timed_out_targets : stats_.failed_targets);
      accounting_.actuation_failed(key, timed_out);
    }
    if (f.suspend) {
      if (!failed) {
        m.state = MemberState::kSuspended;
        m.suspended_at = now;
        m.guard.suspended(now);
        m.operator_suspension = f.by_operator.count(key) != 0;
        accounting_.suspended(key, m.operator_suspension);
      } else {
        // The kernel may have marked the queues suspended before the preemption failed (bit 30):
        // a resume undoes that; it is harmless for queues that are running.
        m.state = MemberState::kSuspended;
        recovery.emplace_back(key, ResumeReason::kRecovery);
        backoff_until_ = now + config_.failure_backoff;
      }
    } else {
      // A failed resume has already been escalated by the actuator (DISABLE resumes every queue of
      // the target, lib/preempt): the queues run either way.
      const bool forced = why == ResumeReason::kHardBound || why == ResumeReason::kStarvation;
      m.state = MemberState::kRunning;
      if (m.suspended_at)
        accounting_.resumed(key, now - *m.suspended_at, forced, m.operator_suspension);
      m.suspended_at.reset();
      m.operator_suspension = false;
      if (why == ResumeReason::kIdle)
        flaps_.idle_resumed(m, now);
      else
        flaps_.other_resume(m);
      // A hold the hard bound ended is over: an operator suspension never outlasts
      // max_suspension. Idle and operator-end resumes come after the hold has passed. After the
      // guard's resume or a recovery the hold suspends it again when the guard / back-off allows.
      // Only the hold the resume was decided on ends: an operator command that came while it was
      // in flight (`ctl suspend` again right after a hold ran out) stands.
      if (why != ResumeReason::kStarvation && why != ResumeReason::kRecovery &&
          m.operator_until == f.operator_until[key])
        m.operator_until.reset();
      m.guard.resumed(now, forced, config_);
    }
  }
  if (!recovery.empty()) {
    emit_resume(recovery, ResumeReason::kRecovery, out);
    return;
  }
  step(now, out);
}

void GpuArbiter::shutdown(ActionSink& out) {
  stopped_ = true;
  std::vector<std::pair<ProcessKey, ResumeReason>> all;
  for (const auto& [k, m] : members_)
    if (m.state != MemberState::kRunning) all.emplace_back(k, ResumeReason::kShutdown);
  in_flight_.reset();  // whatever was in flight is overtaken by this resume
  if (!all.empty()) emit_resume(all, ResumeReason::kShutdown, out);
}

}  // namespace gpreempt::sched
