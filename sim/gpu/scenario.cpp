#include "sim/gpu/scenario.h"

#include <cmath>
#include <random>

namespace gpreempt::sim::gpu {

namespace {

constexpr QueueKey kOnline{1, 0};
constexpr QueueKey kOffline{2, 0};

// Seeded and independent of the standard library's distribution implementations, so identical
// seeds give identical arrivals everywhere.
struct Arrivals {
  std::mt19937_64 rng;
  double rate;
  bool poisson;
  double uniform() { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  SimTime next_gap() {
    const double mean = 1e9 / rate;
    return static_cast<SimTime>(poisson ? -std::log(uniform()) * mean : mean);
  }
};

}  // namespace

ScenarioResult run_scenario(const ScenarioConfig& cfg) {
  EngineOptions eo = cfg.engine;
  eo.remap_on_queue_change = false;
  GpuEngine e(cfg.profile, 1, eo);
  ScenarioResult res;
  if (cfg.online) e.add_queue(kOnline, cfg.online_priority, false);
  if (cfg.offline) e.add_queue(kOffline, cfg.offline_priority, false);


  // Offline: keep two iterations queued so the queue never runs dry.
  std::function<void()> submit_iteration = [&] {
    for (std::size_t i = 0; i < cfg.offline_iteration.size(); ++i) {
      const bool last = i + 1 == cfg.offline_iteration.size();
      e.submit_kernel(kOffline, cfg.offline_iteration[i], [&, last](const JobResult&) {
        if (!last) return;
        ++res.offline_iterations;
        if (e.now() < cfg.duration_ns) submit_iteration();
      });
    }
  };
  if (cfg.offline && !cfg.offline_iteration.empty()) {
    submit_iteration();
    submit_iteration();
  }

  Arrivals arr{std::mt19937_64(cfg.seed), cfg.online_rate_hz, cfg.poisson};
  SimTime next_arrival = cfg.online && !cfg.online_request.empty() && cfg.online_rate_hz > 0
                             ? arr.next_gap()
                             : -1;

  auto arrive = [&](SimTime at) {
    for (std::size_t i = 0; i < cfg.online_request.size(); ++i) {
      const bool last = i + 1 == cfg.online_request.size();
      e.submit_kernel(kOnline, cfg.online_request[i], [&, last, at](const JobResult&) {
        if (!last) return;
        res.latencies_ns.push_back(e.now() - at);
      });
    }
  };

  while (true) {
    const auto ev = e.next_event_time();
    const bool arrival_due = next_arrival >= 0 && next_arrival < cfg.duration_ns &&
                             (!ev || next_arrival <= *ev);
    if (arrival_due) {
      e.advance_to(next_arrival);
      arrive(next_arrival);
      next_arrival += arr.next_gap();
      continue;
    }
    if (!ev || *ev > cfg.duration_ns) break;
    e.advance_to(*ev);
  }
  e.advance_to(cfg.duration_ns);
  res.kernels_completed = e.counters().kernels_completed;
  res.events = e.counters().events;
  res.end_ns = e.now();
  res.runlist = e.records();
  return res;
}

}  // namespace gpreempt::sim::gpu
