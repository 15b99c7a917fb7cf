#include "sched/event.h"

namespace gpreempt::sched {

const char* to_string(RequestSource s) {
  switch (s) {
    case RequestSource::kHint:
      return "hint";
    case RequestSource::kTransparent:
      return "transparent";
    case RequestSource::kOperator:
      return "operator";
  }
  return "?";
}

namespace event {
const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kDone:
      return "done";
    case Outcome::kGone:
      return "gone";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kTimedOut:
      return "timed_out";
  }
  return "?";
}
}  // namespace event

}  // namespace gpreempt::sched
