#include "sched/priority_policy.h"

#include <algorithm>
#include <climits>
#include <set>

#include "sched/time_slice.h"

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

Duration idle_hysteresis(const GpuMember& m, const ArbiterConfig& config, Duration floor) {
  return std::max(floor, m.protection == Protection::kHold ? config.hold_after_idle
                                                           : config.resume_after_idle);
}

bool within_hysteresis(const GpuMember& m, Time now, const ArbiterConfig& config, Duration floor) {
  return m.idle_since && now < *m.idle_since + idle_hysteresis(m, config, floor);
}

bool protects_now(const GpuMember& m, Time now) {
  switch (m.protection) {
    case Protection::kNone:
      return false;
    case Protection::kLate: {
      // A request that is late; once idle, the hysteresis after such a request.
      if (m.active_requests == 0) return m.last_request_late;
      const auto at = late_from(m);
      return at && now >= *at;
    }
    case Protection::kPerRequest:
    case Protection::kHold:
      return true;
  }
  return true;
}

std::optional<Time> late_from(const GpuMember& m) {
  if (m.late_by_request) return m.late_at;
  if (!m.busy_since) return std::nullopt;
  return *m.busy_since + m.late_after;
}

bool operator_held(const GpuMember& m, Time now) {
  return m.operator_until && now < *m.operator_until;
}

PolicyDecision decide(const std::map<ProcessKey, GpuMember>& members, Time now,
                      const ArbiterConfig& config, bool suspends_allowed, GpuId gpu,
                      Duration hysteresis_floor) {
  PolicyDecision d;
  // Under policy none no request and no slice counts; operator holds still act, and whatever is
  // suspended (a reload from gpreempt) resumes at once.
  const bool automatic = config.policy != PolicyName::kNone;
  static const std::vector<TimeSlice> kNoSlices;
  const std::vector<TimeSlice>& slices = automatic ? config.time_slice_for(gpu) : kNoSlices;
  int pending = INT_MIN;  // highest priority with work pending now
  int holding = INT_MIN;  // the same, including work that ended within the hysteresis
  for (const auto& [key, m] : members) {
    // A class whose objective holds without help preempts nobody for its requests; under kLate,
    // only for a request that has run late_after.
    const bool protects = automatic && protects_now(m, now);
    if (automatic && m.protection == Protection::kLate && m.active_requests > 0 && !protects)
      if (auto at = late_from(m)) earliest(d.next_check, *at);
    if (protects && has_pending_work(m, now)) {
      pending = std::max(pending, m.priority);
    } else if (protects && within_hysteresis(m, now, config, hysteresis_floor)) {
      holding = std::max(holding, m.priority);
      earliest(d.next_check, *m.idle_since + idle_hysteresis(m, config, hysteresis_floor));
    }
    if (m.expect_from && *m.expect_from > now) earliest(d.next_check, *m.expect_from);
    if (m.expect_until && *m.expect_until > now && m.active_requests == 0)
      earliest(d.next_check, *m.expect_until);
    if (operator_held(m, now)) earliest(d.next_check, *m.operator_until);
  }
  holding = std::max(holding, pending);

  std::optional<SliceTurn> turn;
  if (!slices.empty()) {
    std::set<std::string> present;
    for (const auto& [key, m] : members) present.insert(m.class_name);
    turn = current_turn(slices, present, now);
    if (turn) earliest(d.next_check, turn->ends_at);
  }
  auto listed = [&](const std::string& name) {
    return std::any_of(slices.begin(), slices.end(),
                       [&](const TimeSlice& t) { return t.class_name == name; });
  };

  // Whether a member of a higher class than `m` has a request running (and protects it).
  auto busy_above = [&](const GpuMember& m) {
    return std::any_of(members.begin(), members.end(), [&](const auto& e) {
      const GpuMember& o = e.second;
      return automatic && o.priority > m.priority && o.active_requests > 0 && protects_now(o, now);
    });
  };

  size_t sliced_only = 0;
  for (const auto& [key, m] : members) {
    const bool held = operator_held(m, now);
    const bool by_request = m.priority < pending;
    // Another class's turn; a member with a request of its own is never held back by a slice.
    const bool sliced = turn && m.class_name != turn->class_name && listed(m.class_name) &&
                        !has_pending_work(m, now);
    // The guard does not stand in the way of an operator hold the config lets override it.
    const bool guarded = !(held && config.operator_overrides_guard);
    if (m.state == MemberState::kRunning && (by_request || held || sliced)) {
      if (!suspends_allowed) continue;  // the arbiter knows when that ends
      // An operator hold that overrides the guard still leaves the floor: a process the hard
      // bound resumed runs starvation_min_run before the hold may take it again.
      const bool allowed =
          guarded ? m.guard.may_suspend(now, config) : m.guard.ran_floor(now, config);
      if (allowed) {
        d.suspend.push_back(key);
        if (!by_request && held) d.by_operator.push_back(key);
        if (!by_request && !held) ++sliced_only;
      } else {
        earliest(d.next_check, guarded ? m.guard.may_suspend_check(now, config)
                                       : m.guard.ran_floor_check(now, config));
      }
    } else if (m.state == MemberState::kSuspended) {
      const Time since = m.suspended_at.value_or(now);
      if (now - since >= config.max_suspension) {
        d.resume.emplace_back(key, ResumeReason::kHardBound);
      } else if (!(m.priority < holding) && !held && !sliced) {
        // Nothing keeps it suspended: not a forced resume, even if the guard would want it too.
        d.resume.emplace_back(key, m.operator_suspension ? ResumeReason::kOperatorEnd
                                   : turn && turn->class_name == m.class_name
                                       ? ResumeReason::kTimeSlice
                                       : ResumeReason::kIdle);
      } else if (guarded && m.guard.must_resume(now, config)) {
        // Not in the middle of a request: the runlist remap would preempt it too.
        const Duration overdue = m.guard.overdue(now, config);
        if (overdue < config.resume_defer_max && busy_above(m)) {
          earliest(d.next_check, now + (config.resume_defer_max - overdue));
          ++d.deferred_resumes;
        } else {
          d.resume.emplace_back(key, ResumeReason::kStarvation);
        }
      } else {
        earliest(d.next_check, since + config.max_suspension);
        if (guarded) earliest(d.next_check, m.guard.must_resume_check(now, config));
      }
    }
  }
  // Only an announcement (no open request) at the pending priority: an early suspend.
  const bool requested = std::any_of(members.begin(), members.end(), [&](const auto& e) {
    return e.second.priority == pending && e.second.active_requests > 0;
  });
  if (!requested) d.suspend_reason = SuspendReason::kExpected;
  if (!d.suspend.empty() && d.by_operator.size() == d.suspend.size())
    d.suspend_reason = SuspendReason::kOperator;
  if (!d.suspend.empty() && sliced_only == d.suspend.size())
    d.suspend_reason = SuspendReason::kTimeSlice;
  return d;
}

}  // namespace gpreempt::sched
