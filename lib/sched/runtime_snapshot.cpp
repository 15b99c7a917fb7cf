#include "sched/runtime_snapshot.h"

#include "sched/runtime.h"

namespace gpreempt::sched {

const RuntimeSnapshot::Gpu& RuntimeSnapshot::gpu(GpuId id) const {
  static const Gpu kNothing;
  auto it = gpus.find(id);
  return it == gpus.end() ? kNothing : it->second;
}

uint64_t RuntimeSnapshot::suspensions() const {
  uint64_t n = 0;
  for (const auto& [id, g] : gpus) n += g.suspensions;
  return n;
}

Duration RuntimeSnapshot::suspended() const {
  Duration d{0};
  for (const auto& [id, g] : gpus) d += g.suspended;
  return d;
}

uint64_t RuntimeSnapshot::flaps() const {
  uint64_t n = 0;
  for (const auto& [id, g] : gpus) n += g.actions.flaps;
  return n;
}

RuntimeSnapshot Runtime::snapshot(Time now) const {
  RuntimeSnapshot s;
  s.at = now;
  for (const auto& [id, t] : suspensions_.gpus()) {
    RuntimeSnapshot::Gpu& g = s.gpus[id];
    g.suspensions = t.suspensions;
    g.suspended = t.suspended_total;
    g.by_class = t.by_class;
    g.by_process = t.by_process;
    for (const auto& [key, since] : t.suspended_since) {
      const Duration d = now - since;
      g.suspended += d;
      g.suspended_now.push_back(key);
      g.by_class[suspensions_.class_at_start(id, key)].suspended += d;
      g.by_process[key].suspended += d;  // a suspended process is live (an exit ends it)
    }
  }
  for (GpuId id : scheduler_.gpus()) s.gpus[id].actions = scheduler_.gpu(id)->stats();
  for (const auto& [id, r] : requests_.gpus()) s.gpus[id].requests = r;
  s.classes = scheduler_.accounting().classes();
  s.unknown_requests = scheduler_.accounting().unknown_requests();
  s.recoveries = recoveries_;
  return s;
}

}  // namespace gpreempt::sched
