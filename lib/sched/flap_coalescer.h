// Flap coalescing on one GPU (ArbiterConfig::coalesce_flaps). An idle resume followed, within the
// hysteresis, by a request that suspends the same process again is a flap: two whole-runlist
// remaps and a CWSR save, which the request waits for, bought a sliver of offline run time. The
// pair would have been cheaper as one suspension, so each flap doubles the GPU's hysteresis (up
// to hold_after_idle) and each idle resume that no request follows within it halves it back: the
// hysteresis grows to the gaps this GPU's requests leave, and no longer than they need.
//
// The suspend that reveals a flap cannot be avoided (the request is there); the doubling
// coalesces the next ones. The arbiter counts flaps whether or not coalescing is on, so that its
// effect can be measured.
#pragma once

#include <vector>

#include "sched/arbiter_config.h"
#include "sched/gpu_member.h"
#include "sched/time.h"

namespace gpreempt::sched {

class FlapCoalescer {
 public:
  // The least idle hysteresis of every member now (0: the members' own).
  Duration floor() const { return floor_; }
  // An idle resume of `m` completed at `now` (a forced or operator resume is not judged).
  void idle_resumed(GpuMember& m, Time now) const { m.idle_resumed_at = now; }
  // A resume of `m` for another reason: it is not judged.
  void other_resume(GpuMember& m) const { m.idle_resumed_at.reset(); }
  // A suspend for a request is issued at `now`: judges the last idle resume of its targets. True
  // when it was a flap (one per suspend, however many targets it names).
  bool request_suspend(const std::vector<GpuMember*>& targets, Time now,
                       const ArbiterConfig& config);

 private:
  Duration floor_{0};
};

}  // namespace gpreempt::sched
