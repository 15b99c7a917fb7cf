// What the model needs to know about one kernel dispatch: its shape and its cost.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "sim/gpu/cwsr_model.h"
#include "sim/gpu/profile.h"

namespace gpreempt::sim::gpu {

struct KernelSpec {
  std::string name;
  std::array<uint32_t, 3> grid{1, 1, 1};       // work-items per dimension (AQL grid_size_*)
  std::array<uint32_t, 3> workgroup{1, 1, 1};  // work-items per workgroup (AQL workgroup_size_*)
  // How long one workgroup occupies its CU slot (ns, calibrated at full occupancy, so it does
  // not change with co-runners: interference comes from slot contention, see sim-model.md).
  SimTime wg_cost_ns = 1000;
  // Registers and LDS (its code object's): occupancy and the CWSR save follow from them.
  KernelResources resources;

  uint64_t workgroups() const {
    uint64_t n = 1;
    for (int d = 0; d < 3; ++d) {
      const uint32_t wg = std::max<uint32_t>(workgroup[d], 1);
      n *= (static_cast<uint64_t>(grid[d]) + wg - 1) / wg;
    }
    return n;
  }
  uint32_t waves_per_workgroup(uint32_t wave_size) const {
    const uint64_t items = static_cast<uint64_t>(std::max<uint32_t>(workgroup[0], 1)) *
                           std::max<uint32_t>(workgroup[1], 1) * std::max<uint32_t>(workgroup[2], 1);
    return static_cast<uint32_t>((items + wave_size - 1) / wave_size);
  }
};

}  // namespace gpreempt::sim::gpu
