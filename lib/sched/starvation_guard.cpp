#include "sched/starvation_guard.h"

#include <algorithm>

namespace gpreempt::sched {

namespace {
Duration budget(const ArbiterConfig& c) {
  return std::max(Duration::zero(), c.starvation_window - c.starvation_min_run);
}
}  // namespace

void StarvationGuard::suspended(Time at) {
  if (!since_) since_ = at;
}

void StarvationGuard::resumed(Time at, bool forced, const ArbiterConfig& c) {
  if (since_) {
    if (at > *since_) past_.push_back({*since_, at});
    since_.reset();
  }
  if (forced)
    forced_resume_at_ = at;
  else
    forced_resume_at_.reset();
  prune(at, c);
}

Duration StarvationGuard::suspended_in_window(Time now, const ArbiterConfig& c) const {
  const Time from = now - c.starvation_window;
  Duration total{0};
  for (const auto& i : past_) {
    Time b = std::max(i.begin, from), e = std::min(i.end, now);
    if (e > b) total += e - b;
  }
  if (since_ && now > std::max(*since_, from)) total += now - std::max(*since_, from);
  return total;
}

bool StarvationGuard::must_resume(Time now, const ArbiterConfig& c) const {
  return since_ && suspended_in_window(now, c) >= budget(c);
}

Duration StarvationGuard::overdue(Time now, const ArbiterConfig& c) const {
  if (!must_resume(now, c)) return Duration{0};
  return suspended_in_window(now, c) - budget(c);
}

Time StarvationGuard::must_resume_check(Time now, const ArbiterConfig& c) const {
  return now + std::max(Duration{1}, budget(c) - suspended_in_window(now, c));
}

bool StarvationGuard::may_suspend(Time now, const ArbiterConfig& c) const {
  if (forced_resume_at_ && now - *forced_resume_at_ < c.starvation_min_run) return false;
  return suspended_in_window(now, c) + c.starvation_min_run <= budget(c);
}

bool StarvationGuard::ran_floor(Time now, const ArbiterConfig& c) const {
  return !forced_resume_at_ || now - *forced_resume_at_ >= c.starvation_min_run;
}

Time StarvationGuard::ran_floor_check(Time now, const ArbiterConfig& c) const {
  return std::max(now + Duration{1},
                  forced_resume_at_ ? *forced_resume_at_ + c.starvation_min_run : now);
}

Time StarvationGuard::may_suspend_check(Time now, const ArbiterConfig& c) const {
  Time t = now + Duration{1};
  if (forced_resume_at_) t = std::max(t, *forced_resume_at_ + c.starvation_min_run);
  Duration excess = suspended_in_window(now, c) + c.starvation_min_run - budget(c);
  if (excess > Duration::zero()) t = std::max(t, now + excess);
  return t;
}

void StarvationGuard::prune(Time now, const ArbiterConfig& c) {
  while (!past_.empty() && past_.front().end <= now - c.starvation_window) past_.pop_front();
}

}  // namespace gpreempt::sched
