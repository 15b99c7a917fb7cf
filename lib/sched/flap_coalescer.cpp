#include "sched/flap_coalescer.h"

#include <algorithm>

namespace gpreempt::sched {

bool FlapCoalescer::request_suspend(const std::vector<GpuMember*>& targets, Time now,
                                    const ArbiterConfig& config) {
  std::optional<Time> last;
  for (GpuMember* m : targets) {
    if (m->idle_resumed_at && (!last || *m->idle_resumed_at > *last)) last = m->idle_resumed_at;
    m->idle_resumed_at.reset();
  }
  if (!last) return false;
  const Time resumed = *last;
  // The hysteresis the resume waited (a class held under Protection::kHold waits hold_after_idle,
  // the cap, already).
  const Duration hysteresis = std::max(floor_, config.resume_after_idle);
  if (now - resumed < hysteresis) {
    if (config.coalesce_flaps) floor_ = std::min(config.hold_after_idle, 2 * hysteresis);
    return true;
  }
  if (floor_ > Duration{0}) {
    floor_ /= 2;
    if (floor_ <= config.resume_after_idle) floor_ = Duration{0};
  }
  return false;
}

}  // namespace gpreempt::sched
