#include "sched/priority_policy.h"

#include <algorithm>
#include <climits>

namespace gpreempt::sched {

namespace {
void earliest(std::optional<Time>& acc, Time t) {
  if (!acc || t < *acc) acc = t;
}
}  // namespace

bool has_pending_work(const GpuMember& m, Time now) {
  if (m.active_requests > 0) return true;
  return m.expect_from && m.expect_until && *m.expect_from <= now && now < *m.expect_until;
}

bool within_hysteresis(const GpuMember& m, Time now, const ArbiterConfig& config) {
  return m.idle_since && now < *m.idle_since + config.resume_after_idle;
}

PolicyDecision decide(const std::map<ProcessKey, GpuMember>& members, Time now,
                      const ArbiterConfig& config, bool suspends_allowed) {
  PolicyDecision d;
  int pending = INT_MIN;  // highest priority with work pending now
  int holding = INT_MIN;  // the same, including work that ended within the hysteresis
  for (const auto& [key, m] : members) {
    if (has_pending_work(m, now)) {
      pending = std::max(pending, m.priority);
    } else if (within_hysteresis(m, now, config)) {
      holding = std::max(holding, m.priority);
      earliest(d.next_check, *m.idle_since + config.resume_after_idle);
    }
    if (m.expect_from && *m.expect_from > now) earliest(d.next_check, *m.expect_from);
    if (m.expect_until && *m.expect_until > now && m.active_requests == 0)
      earliest(d.next_check, *m.expect_until);
  }
  holding = std::max(holding, pending);

  for (const auto& [key, m] : members) {
    if (m.state == MemberState::kRunning && m.priority < pending) {
      if (!suspends_allowed) continue;  // the arbiter knows when that ends
      if (m.guard.may_suspend(now, config))
        d.suspend.push_back(key);
      else
        earliest(d.next_check, m.guard.may_suspend_check(now, config));
    } else if (m.state == MemberState::kSuspended) {
      const Time since = m.suspended_at.value_or(now);
      if (now - since >= config.max_suspension) {
        d.resume.emplace_back(key, ResumeReason::kHardBound);
      } else if (m.guard.must_resume(now, config)) {
        d.resume.emplace_back(key, ResumeReason::kStarvation);
      } else if (!(m.priority < holding)) {
        d.resume.emplace_back(key, ResumeReason::kIdle);
      } else {
        earliest(d.next_check, since + config.max_suspension);
        earliest(d.next_check, m.guard.must_resume_check(now, config));
      }
    }
  }
  // Only an announcement (no open request) at the pending priority: an early suspend.
  const bool requested = std::any_of(members.begin(), members.end(), [&](const auto& e) {
    return e.second.priority == pending && e.second.active_requests > 0;
  });
  if (!requested) d.suspend_reason = SuspendReason::kExpected;
  return d;
}

}  // namespace gpreempt::sched
