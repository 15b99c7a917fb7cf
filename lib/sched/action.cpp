#include "sched/action.h"

namespace gpreempt::sched {

const char* to_string(SuspendReason r) {
  switch (r) {
    case SuspendReason::kRequest:
      return "request";
    case SuspendReason::kExpected:
      return "expected";
    case SuspendReason::kOperator:
      return "operator";
    case SuspendReason::kTimeSlice:
      return "time_slice";
  }
  return "?";
}

const char* to_string(ResumeReason r) {
  switch (r) {
    case ResumeReason::kIdle:
      return "idle";
    case ResumeReason::kHardBound:
      return "hard_bound";
    case ResumeReason::kStarvation:
      return "starvation";
    case ResumeReason::kRecovery:
      return "recovery";
    case ResumeReason::kShutdown:
      return "shutdown";
    case ResumeReason::kOperatorEnd:
      return "operator_end";
    case ResumeReason::kTimeSlice:
      return "time_slice";
  }
  return "?";
}

}  // namespace gpreempt::sched
