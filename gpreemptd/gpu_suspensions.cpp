#include "gpu_suspensions.h"

#include <spdlog/spdlog.h>

namespace gpreemptd {

namespace sched = gpreempt::sched;

void GpuSuspensions::posted(sched::GpuId gpu, const std::vector<sched::ProcessKey>& targets) {
  for (const auto& k : targets) ++in_flight_[{gpu, k}];
}

void GpuSuspensions::completed(GpuRecord& rec, const sched::event::ActuationCompleted& c,
                                 bool suspend, sched::Time now) {
  for (const auto& o : c.outcomes) {
    // The actuator answers every target of an action once.
    if (auto it = in_flight_.find({c.gpu, o.key}); it != in_flight_.end() && --it->second == 0)
      in_flight_.erase(it);
    if (!suspend) {
      if (auto it = rec.suspended_since.find(o.key); it != rec.suspended_since.end()) {
        ended(rec, o.key, now - it->second);
        rec.suspended_since.erase(it);
      }
      continue;
    }
    if (o.outcome != sched::event::Outcome::kDone) continue;
    if (!facts_.live(o.key)) {
      spdlog::debug("GPU {}: the suspend of {} completed after it exited; nothing to account",
                    c.gpu, sched::to_string(o.key));
      continue;
    }
    if (facts_.managed(c.gpu, o.key)) {
      ++rec.suspensions;
      ++rec.by_class[facts_.class_of(o.key)].suspensions;
      ++rec.by_process[o.key].suspensions;
    }
    rec.suspended_since.emplace(o.key, now);
  }
}

void GpuSuspensions::exited(std::map<sched::GpuId, GpuRecord>& gpus, const sched::ProcessKey& key,
                              sched::Time now) const {
  for (auto& [gpu, rec] : gpus) {
    if (auto it = rec.suspended_since.find(key); it != rec.suspended_since.end()) {
      ended(rec, key, now - it->second);
      rec.suspended_since.erase(it);
    }
    rec.by_process.erase(key);
  }
}

std::vector<sched::ProcessKey> GpuSuspensions::orphans(const GpuRecord& rec,
                                                         sched::GpuId gpu) const {
  std::vector<sched::ProcessKey> out;
  for (const auto& [key, since] : rec.suspended_since)
    if (!facts_.managed(gpu, key) && !in_flight(gpu, key)) out.push_back(key);
  return out;
}

void GpuSuspensions::ended(GpuRecord& rec, const sched::ProcessKey& key, sched::Duration d) const {
  rec.suspended_total += d;
  rec.by_class[facts_.class_of(key)].suspended += d;
  if (auto p = rec.by_process.find(key); p != rec.by_process.end()) p->second.suspended += d;
}

}  // namespace gpreemptd
