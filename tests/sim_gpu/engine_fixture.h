// Helpers for driving one GpuEngine in simulated time.
#pragma once

#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "sim/gpu/engine.h"

namespace gpreempt::sim::gpu::testing {

// A kernel of `wgs` workgroups of 256 work-items (4 waves each) lasting `wg_ns` per workgroup.
inline KernelSpec kernel(uint32_t wgs, SimTime wg_ns, const char* name = "k") {
  KernelSpec k;
  k.name = name;
  k.grid = {wgs * 256, 1, 1};
  k.workgroup = {256, 1, 1};
  k.wg_cost_ns = wg_ns;
  return k;
}

// Workgroups that fill every slot of every XCC of `p` once (256-item workgroups).
inline uint32_t full_wave(const GpuProfile& p) {
  const uint32_t per_xcc = std::min(p.cus_per_xcc * p.max_workgroups_per_cu,
                                    p.cus_per_xcc * p.max_waves_per_cu / 4);
  return per_xcc * p.num_xcc;
}

struct Recorder {
  std::vector<JobResult> done;
  JobDone cb() {
    return [this](const JobResult& r) { done.push_back(r); };
  }
};

struct RunlistResult {
  std::optional<int> result;
  SimTime at = -1;
};

inline std::function<void(int)> capture(RunlistResult& out, const GpuEngine& e) {
  return [&out, &e](int r) {
    out.result = r;
    out.at = e.now();
  };
}

// Engine without the create/destroy remaps, so tests see exactly the costs they provoke.
inline EngineOptions quiet() {
  EngineOptions o;
  o.remap_on_queue_change = false;
  return o;
}

}  // namespace gpreempt::sim::gpu::testing
