#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

void Simulation::collect_results() {
  res_.sim_seconds = static_cast<double>(now_) / 1e9;
  res_.events = des_events_;
  for (const auto& e : engines_) {
    res_.events += e->counters().events;
    res_.waves_saved += e->counters().waves_saved;
    res_.runlist.insert(res_.runlist.end(), e->records().begin(), e->records().end());
  }
  std::set<uint32_t> offline_gpus;
  for (auto& c : clients_) {
    ClientRow row;
    row.name = c.name;
    row.online = c.online;
    row.requests = c.completed;
    row.latencies_ms = c.latencies_ms;
    row.iterations = c.iterations;
    if (!c.online) {
      res_.offline_iterations += c.iterations;
      offline_gpus.insert(c.gpus.begin(), c.gpus.end());
    }
    res_.clients.push_back(std::move(row));
  }
  if (!offline_gpus.empty() && now_ > 0) {
    double sum = 0;
    for (uint32_t g : offline_gpus) sum += static_cast<double>(engines_[g]->group_busy_ns(kOfflineGroup)) / static_cast<double>(now_);
    res_.offline_gpu_busy_fraction = sum / static_cast<double>(offline_gpus.size());
  }
  std::vector<SuspendedWindow> windows;
  if (actuator_) {
    actuator_->finish(now_);
    res_.suspensions = actuator_->suspensions();
    for (sched::GpuId id : gpu_ids_)
      if (const sched::GpuArbiter* arb = runtime_ ? runtime_->scheduler().gpu(id) : nullptr)
        res_.flaps += arb->stats().flaps;
    res_.actuation_timeouts = actuator_->timeouts();
    windows = actuator_->windows();
  }
  policy_->finish(now_, res_, windows);
  SimTime suspended = 0;
  for (const auto& w : windows) {
    suspended += w.end - w.start;
    if (spec_.record.timeline && static_cast<double>(w.end) >= spec_.record.timeline_from_s * 1e9 &&
        static_cast<double>(w.start) <= spec_.record.timeline_to_s * 1e9) {
      std::string who = "offline";
      if (auto it = names_.find(w.key); it != names_.end()) who = it->second;
      res_.timeline.push_back({w.gpu, "suspended", who, w.start, w.end});
    }
  }
  res_.suspended_s = static_cast<double>(suspended) / 1e9;
  std::stable_sort(res_.timeline.begin(), res_.timeline.end(),
                   [](const TimelineEntry& a, const TimelineEntry& b) { return a.start < b.start; });
}

}  // namespace gpreempt::eval::des::detail
