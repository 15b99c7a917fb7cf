// What the scheduler asks for (actions out). The driver performs Suspend/Resume asynchronously
// and answers each with event::ActuationCompleted carrying the same id; it keeps one timer and
// re-arms it on every ArmTimer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreempt::sched {

enum class SuspendReason {
  kRequest,
  kExpected,
  kOperator,   // every target of the action is suspended only by an operator command
  kTimeSlice,  // every target is suspended only because another class has its time slice
};
enum class ResumeReason {
  kIdle,        // the higher-priority work ended and the idle hysteresis passed
  kHardBound,   // the suspension reached max_suspension
  kStarvation,  // the lower class's minimum share in the window would be violated
  // A suspend failed or timed out: undo whatever it may have done; or an orphan's queues are
  // suspended on a GPU whose arbiter no longer has it (Scheduler::recover).
  kRecovery,
  kShutdown,
  // A suspension made by an operator command alone ended (expired or `ctl resume`) and no
  // request needs it any more.
  kOperatorEnd,
  kTimeSlice,  // its class's time slice began
};
const char* to_string(SuspendReason r);
const char* to_string(ResumeReason r);

namespace action {

// Suspend every queue of each target on `gpu`, letting running waves drain for `grace` first.
struct Suspend {
  uint64_t id = 0;
  GpuId gpu = 0;
  std::vector<ProcessKey> targets;
  Duration grace{0};
  SuspendReason reason = SuspendReason::kRequest;
};
struct Resume {
  uint64_t id = 0;
  GpuId gpu = 0;
  std::vector<ProcessKey> targets;
  ResumeReason reason = ResumeReason::kIdle;
};
// Deliver event::TimerFired at `at` (nullopt: no timer needed). Replaces the previous request.
struct ArmTimer {
  std::optional<Time> at;
};
// Debug-trap suspend is unavailable on `gpu`: the policy only ranks the processes there. The
// queue priority (KFD's 0..15) each should have; only the owning process can set it, so the
// daemon reports this (and tells hint clients) rather than applying it.
struct PriorityOnly {
  GpuId gpu = 0;
  std::string reason;
  std::vector<std::pair<ProcessKey, int>> queue_priorities;
};

}  // namespace action

using Action =
    std::variant<action::Suspend, action::Resume, action::ArmTimer, action::PriorityOnly>;

}  // namespace gpreempt::sched
