#include "sched/preemption_policy.h"

namespace gpreempt::sched {

PreemptionPolicy::PreemptionPolicy(PolicyConfig config, OfflineActuator& actuator)
    : config_(config), actuator_(actuator) {}

void PreemptionPolicy::online_request_started(Time now) {
  ++active_;
  if (!suspended_) try_suspend(now);
}

void PreemptionPolicy::online_request_finished(Time now) {
  if (active_ > 0) --active_;
  if (active_ == 0) idle_since_ = now;
  tick(now);
}

void PreemptionPolicy::try_suspend(Time now) {
  // A forced resume guarantees the offline job a slice of progress before it can be stopped again.
  if (last_resume_forced_ && now - *resumed_at_ < config_.min_offline_run) {
    ++stats_.skipped_suspends;
    return;
  }
  if (actuator_.suspend_offline() < 0) {
    ++stats_.failed_suspends;
    return;
  }
  suspended_ = true;
  suspended_since_ = now;
  ++stats_.suspends;
}

void PreemptionPolicy::do_resume(Time now, bool forced) {
  if (actuator_.resume_offline() < 0) {
    // The actuator is responsible for the last resort (DISABLE); we still count the suspension
    // as over so the policy never believes it holds a suspension it cannot end.
    ++stats_.failed_resumes;
  } else {
    ++stats_.resumes;
  }
  suspended_ = false;
  stats_.suspended_total += now - suspended_since_;
  resumed_at_ = now;
  last_resume_forced_ = forced;
  if (forced) ++stats_.forced_resumes;
}

void PreemptionPolicy::tick(Time now) {
  if (!suspended_) {
    // Online work still waiting after a forced resume gets the GPU back once the offline job
    // has had its guaranteed slice.
    if (active_ > 0 && last_resume_forced_) try_suspend(now);
    return;
  }
  if (now - suspended_since_ >= config_.max_suspension) {
    do_resume(now, active_ > 0);
    return;
  }
  if (active_ == 0 && now - idle_since_ >= config_.resume_after_idle) do_resume(now, false);
}

std::optional<Time> PreemptionPolicy::next_deadline() const {
  if (suspended_) {
    Time limit = suspended_since_ + config_.max_suspension;
    if (active_ == 0) return std::min(limit, idle_since_ + config_.resume_after_idle);
    return limit;
  }
  if (active_ > 0 && last_resume_forced_) return *resumed_at_ + config_.min_offline_run;
  return std::nullopt;
}

void PreemptionPolicy::release(Time now) {
  if (suspended_) do_resume(now, false);
}

}  // namespace gpreempt::sched
