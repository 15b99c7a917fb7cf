#include "sched/time_slice.h"

namespace gpreempt::sched {

std::optional<SliceTurn> current_turn(const std::vector<TimeSlice>& slices,
                                      const std::set<std::string>& present, Time now) {
  std::vector<const TimeSlice*> cycle;
  Duration period{0};
  for (const auto& s : slices)
    if (s.length > Duration::zero() && present.count(s.class_name)) {
      cycle.push_back(&s);
      period += s.length;
    }
  if (cycle.size() < 2) return std::nullopt;
  // Times before the epoch (negative) still map into [0, period).
  Duration phase = now % period;
  if (phase < Duration::zero()) phase += period;
  const Time cycle_start = now - phase;
  Duration begin{0};
  for (const TimeSlice* s : cycle) {
    if (phase < begin + s->length) return SliceTurn{s->class_name, cycle_start + begin + s->length};
    begin += s->length;
  }
  return std::nullopt;  // unreachable: phase < period
}

}  // namespace gpreempt::sched
