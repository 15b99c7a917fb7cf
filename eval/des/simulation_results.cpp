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
  std::set<uint32_t> offline_gpus, online_gpus;
  for (auto& c : clients_) {
    if (c.online) online_gpus.insert(c.gpus.begin(), c.gpus.end());
    if (c.llm) {
      LlmRow l;
      l.name = c.name;
      for (const auto& r : c.llm->requests())
        if (r.done()) l.finished.push_back(r);
      // Completion order: by last token, then index (the order the scheduler finished them).
      std::stable_sort(l.finished.begin(), l.finished.end(),
                       [](const llm::Request& a, const llm::Request& b) { return *a.last_token < *b.last_token; });
      const LlmServerDef& d = *spec_.online[static_cast<std::size_t>(&c - clients_.data())].llm;
      l.ttft_slo_ms = d.ttft_slo_ms;
      l.tpot_slo_ms = d.tpot_slo_ms;
      l.steps = c.llm->steps();
      l.preemptions = c.llm->preemptions();
      l.batched_tokens = c.llm->batched_tokens();
      l.step_ms = c.llm_step_ms;
      l.gpus = c.gpus;
      for (const auto& cp : c.copies) l.collective_wait_ms.push_back(static_cast<double>(cp.collective_wait_ns) / 1e6);
      res_.llm.push_back(std::move(l));
    }
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
  // The mean over `gpus` of the share of the run their queues of `group` kept the GPU busy.
  const auto busy_fraction = [this](const std::set<uint32_t>& gpus, uint32_t group) {
    if (gpus.empty() || now_ <= 0) return 0.0;
    double sum = 0;
    for (uint32_t g : gpus) sum += static_cast<double>(engines_[g]->group_busy_ns(group)) / static_cast<double>(now_);
    return sum / static_cast<double>(gpus.size());
  };
  res_.offline_gpu_busy_fraction = busy_fraction(offline_gpus, kOfflineGroup);
  res_.online_gpu_busy_fraction = busy_fraction(online_gpus, kOnlineGroup);
  // What the scheduler did comes from the Runtime's figures, as gpreemptd's status and metrics
  // render them; the actuator's windows draw the timeline. A baseline without the Runtime (the
  // oracle) measures its own.
  std::vector<SuspendedWindow> windows;
  SimTime suspended = 0;
  if (actuator_) {
    actuator_->finish(now_);
    const sched::RuntimeSnapshot figures = runtime_->snapshot(sched::Time{now_});
    res_.suspensions = figures.suspensions();
    res_.flaps = figures.flaps();
    suspended = figures.suspended().count();
    res_.actuation_timeouts = actuator_->timeouts();
    windows = actuator_->windows();
  }
  policy_->finish(now_, res_, windows);
  if (!actuator_)
    for (const auto& w : windows) suspended += w.end - w.start;
  for (const auto& w : windows) {
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
