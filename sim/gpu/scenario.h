// An online service and an offline trainer sharing one simulated GPU with no control, run
// entirely in simulated time (discrete events): the model's own speed benchmark and what the
// determinism test replays. Preemption is evaluated by eval/des (gpreempt-des), where the real
// lib/sched Scheduler decides; this harness has no policy of its own.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/gpu/engine.h"

namespace gpreempt::sim::gpu {

struct ScenarioConfig {
  GpuProfile profile = mi308x_profile();
  EngineOptions engine;
  SimTime duration_ns = 1'000'000'000;
  uint64_t seed = 1;  // arrivals
  // Online: requests arrive open-loop; each is this sequence of kernels on one queue.
  bool online = true;
  double online_rate_hz = 20.0;
  bool poisson = true;  // else fixed interval
  std::vector<KernelSpec> online_request;
  uint32_t online_priority = 7;
  // Offline: the iteration's kernels back to back, forever.
  bool offline = true;
  std::vector<KernelSpec> offline_iteration;
  uint32_t offline_priority = 7;
};

struct ScenarioResult {
  std::vector<SimTime> latencies_ns;  // per completed online request
  uint64_t offline_iterations = 0;
  uint64_t kernels_completed = 0;
  uint64_t events = 0;
  SimTime end_ns = 0;
  std::deque<RunlistRecord> runlist;
};

ScenarioResult run_scenario(const ScenarioConfig& cfg);

}  // namespace gpreempt::sim::gpu
