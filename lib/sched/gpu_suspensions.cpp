#include "sched/gpu_suspensions.h"

namespace gpreempt::sched {

void GpuSuspensions::posted(GpuId gpu, const std::vector<ProcessKey>& targets) {
  gpus_[gpu];
  for (const auto& k : targets) ++in_flight_[{gpu, k}];
}

void GpuSuspensions::completed(const event::ActuationCompleted& c, bool suspend, Time now) {
  GpuSuspensionTally& t = gpus_[c.gpu];
  for (const auto& o : c.outcomes) {
    // The actuator answers every target of an action once.
    if (auto it = in_flight_.find({c.gpu, o.key}); it != in_flight_.end() && --it->second == 0)
      in_flight_.erase(it);
    if (!suspend) {
      if (auto it = t.suspended_since.find(o.key); it != t.suspended_since.end()) {
        ended(c.gpu, t, o.key, now - it->second);
        t.suspended_since.erase(it);
      }
      continue;
    }
    if (o.outcome != event::Outcome::kDone) continue;
    if (!facts_.live(o.key)) continue;  // its queues went with it
    const std::string cls = facts_.class_of(o.key);
    if (facts_.managed(c.gpu, o.key)) {
      ++t.suspensions;
      ++t.by_class[cls].suspensions;
      ++t.by_process[o.key].suspensions;
    }
    if (t.suspended_since.emplace(o.key, now).second) class_at_start_[{c.gpu, o.key}] = cls;
  }
}

void GpuSuspensions::exited(const ProcessKey& key, Time now) {
  for (auto& [gpu, t] : gpus_) {
    if (auto it = t.suspended_since.find(key); it != t.suspended_since.end()) {
      ended(gpu, t, key, now - it->second);
      t.suspended_since.erase(it);
    }
    t.by_process.erase(key);
  }
}

std::vector<ProcessKey> GpuSuspensions::orphans(GpuId gpu) const {
  std::vector<ProcessKey> out;
  auto t = gpus_.find(gpu);
  if (t == gpus_.end()) return out;
  for (const auto& [key, since] : t->second.suspended_since)
    if (!facts_.managed(gpu, key) && !in_flight(gpu, key)) out.push_back(key);
  return out;
}

bool GpuSuspensions::none_suspended() const {
  for (const auto& [gpu, t] : gpus_)
    if (!t.suspended_since.empty()) return false;
  return true;
}

const GpuSuspensionTally* GpuSuspensions::gpu(GpuId id) const {
  auto it = gpus_.find(id);
  return it == gpus_.end() ? nullptr : &it->second;
}

std::string GpuSuspensions::class_at_start(GpuId gpu, const ProcessKey& key) const {
  auto cls = class_at_start_.find({gpu, key});
  return cls == class_at_start_.end() ? facts_.class_of(key) : cls->second;
}

void GpuSuspensions::ended(GpuId gpu, GpuSuspensionTally& t, const ProcessKey& key, Duration d) {
  t.suspended_total += d;
  t.by_class[class_at_start(gpu, key)].suspended += d;
  class_at_start_.erase({gpu, key});
  if (auto p = t.by_process.find(key); p != t.by_process.end()) p->second.suspended += d;
}

}  // namespace gpreempt::sched
