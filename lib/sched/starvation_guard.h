// The starvation guard of one suspendable process on one GPU: in every window of
// `starvation_window`, it runs for at least `starvation_min_run`.
//
// It keeps the process's recent suspended intervals. While suspended, the process must be resumed
// once its suspended time within the last window reaches window - min_run. It may be suspended
// again only when (a) it has run for min_run since a forced resume (guard or hard bound), and
// (b) the window leaves room for a suspension of at least min_run — so the guard never produces
// suspensions too short to be worth a runlist round trip.
//
// Deadlines are "not before" times: the suspended time within the window changes by at most one
// second per second, so re-checking at the returned time is never late, and re-checking then
// returns a later deadline when the answer has not changed yet.
#pragma once

#include <deque>
#include <optional>

#include "sched/arbiter_config.h"
#include "sched/time.h"

namespace gpreempt::sched {

class StarvationGuard {
 public:
  void suspended(Time at);
  // Forgets intervals older than the window.
  void resumed(Time at, bool forced, const ArbiterConfig& c);

  // Suspended time within [now - window, now], the current suspension included.
  Duration suspended_in_window(Time now, const ArbiterConfig& c) const;
  bool must_resume(Time now, const ArbiterConfig& c) const;
  // How long past its due time a resume the guard asks for is (0 when not due).
  Duration overdue(Time now, const ArbiterConfig& c) const;
  // While suspended: when must_resume may first become true.
  Time must_resume_check(Time now, const ArbiterConfig& c) const;
  bool may_suspend(Time now, const ArbiterConfig& c) const;
  // The floor no override removes: it has run starvation_min_run since a forced resume (or was
  // not force-resumed), and when that becomes true.
  bool ran_floor(Time now, const ArbiterConfig& c) const;
  Time ran_floor_check(Time now, const ArbiterConfig& c) const;
  // While not allowed to suspend: when may_suspend may first become true.
  Time may_suspend_check(Time now, const ArbiterConfig& c) const;

 private:
  struct Interval {
    Time begin, end;
  };
  void prune(Time now, const ArbiterConfig& c);

  std::deque<Interval> past_;
  std::optional<Time> since_;  // suspended since
  std::optional<Time> forced_resume_at_;
};

}  // namespace gpreempt::sched
