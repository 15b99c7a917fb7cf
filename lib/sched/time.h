// The one time type of lib/sched. Policy code never reads a clock: every event arrives with the
// time it happened, in nanoseconds since an epoch the driver chooses (steady_clock in the daemon,
// zero in unit tests and the discrete-event engine). Only differences between times matter.
#pragma once

#include <chrono>

namespace gpreempt::sched {

// A point in time (nanoseconds since the driver's epoch) and a span of time share one type; names
// say which one is meant.
using Time = std::chrono::nanoseconds;
using Duration = std::chrono::nanoseconds;

}  // namespace gpreempt::sched
