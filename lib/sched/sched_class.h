// A class of GPU processes as the arbiter sees it: a name, a priority (higher preempts lower) and
// the triggers through which its requests count. How processes are matched to a class is the
// classifier's business (classifier.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/event.h"
#include "sched/objective.h"

namespace gpreempt::sched {

struct SchedClass {
  static constexpr int kMinPriority = 0;
  static constexpr int kMaxPriority = 1000;

  std::string name;
  int priority = 0;
  // Request sources that count for this class (the config's `trigger`); default: hints only.
  std::vector<RequestSource> triggers{RequestSource::kHint};
  // The latency objective of its requests (slo_controller.h); none: every request is protected.
  std::optional<Objective> objective;

  bool accepts(RequestSource s) const;
};

}  // namespace gpreempt::sched
