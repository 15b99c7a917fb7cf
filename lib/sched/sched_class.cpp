#include "sched/sched_class.h"

#include <algorithm>

namespace gpreempt::sched {

bool SchedClass::accepts(RequestSource s) const {
  return std::find(triggers.begin(), triggers.end(), s) != triggers.end();
}

}  // namespace gpreempt::sched
