// Time-slice policy: classes listed in `[policy] time_slice` take turns on each GPU, each for its
// slice, on a fixed cycle. While one class has its turn, the members of the other listed classes on
// that GPU are held suspended — unless they have a request pending (then the priority rule decides,
// as everywhere: requests are never delayed by a slice).
//
// The turn is a pure function of the time: the cycle is the listed classes present on the GPU, in
// config order (highest priority first), and time t is in the turn of the class whose slice holds
// t mod (sum of their slices). So it needs no state and no driver but the scheduler's own timer,
// and GPUs with the same classes present change turns together. A GPU where fewer than two listed
// classes are present slices nothing.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/time.h"

namespace gpreempt::sched {

struct TimeSlice {
  std::string class_name;
  Duration length{0};  // > 0
};

struct SliceTurn {
  std::string class_name;  // whose turn it is
  Time ends_at{0};         // when the next turn starts
};

// The turn at `now` among the slices whose class is in `present`; nullopt when fewer than two are.
std::optional<SliceTurn> current_turn(const std::vector<TimeSlice>& slices,
                                      const std::set<std::string>& present, Time now);

}  // namespace gpreempt::sched
