// The port through which a Runtime (runtime.h) has its Suspend and Resume actions carried out. Two
// implementations ship: gpreemptd's (gpreemptd/actuator.h: DBG_TRAP ioctls through lib/preempt,
// on a control thread per GPU) and the discrete-event engine's (eval/des/actuator.h: runlist
// updates of the GPU model in simulated time); tests use a fake. The contract they all keep is
// tests/eval_des/test_actuator_contract.cpp:
//   * suspend() and resume() return at once; the work is asynchronous, and no answer is delivered
//     from within them;
//   * every action is answered exactly once, through the completion callback the implementation
//     was built with, as an event::ActuationCompleted carrying the action's id and GPU and one
//     outcome per target, in the targets' order;
//   * an action's targets are acted on only on the action's GPU;
//   * a target that has exited is answered kGone, never kDone.
// The Runtime hands every answer back to the scheduler; the port never decides anything.
#pragma once

#include "sched/action.h"
#include "sched/time.h"

namespace gpreempt::sched {

class ActuatorPort {
 public:
  virtual ~ActuatorPort() = default;
  // `now` is the driver's time of the decision (the DES answers relative to it; the daemon's
  // actuator, which runs on real time, ignores it).
  virtual void suspend(Time now, const action::Suspend& a) = 0;
  virtual void resume(Time now, const action::Resume& a) = 0;
};

}  // namespace gpreempt::sched
