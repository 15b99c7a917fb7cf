// The compute geometry of each simulated GPU model, in ONE place. The KFD side (DeviceProfile:
// what topology and debugfs report) and the timing model (sim/gpu GpuProfile: what the engine
// schedules on) both derive their geometry from this table, so the simulated KFD, kfdsimd's GPU
// model and the discrete-event evaluation cannot disagree about CUs, clocks or queue slots
// (tests/eval_des/test_geometry.cpp checks it). Sources: docs/sim-device-profiles.md and
// docs/sim-model.md §5.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpreempt::sim {

struct GpuGeometry {
  std::string_view name;        // "mi308x"
  std::string_view gfx_target;  // "gfx942"
  uint32_t num_xcc = 1;
  uint32_t cus_per_xcc = 0;
  uint32_t simds_per_cu = 4;
  uint32_t max_waves_per_simd = 8;
  uint32_t wave_size = 64;
  uint32_t clock_mhz = 0;        // max_engine_clk_fcompute
  uint32_t pipes_per_mec = 4;    // MEC pipes KFD hands to the HWS
  uint32_t queues_per_pipe = 8;  // HQD slots per pipe in hardware
  uint32_t first_kfd_queue = 2;  // slots 0..1 of every pipe belong to amdgpu itself

  constexpr uint32_t cu_count() const { return num_xcc * cus_per_xcc; }
  constexpr uint32_t max_waves_per_cu() const { return simds_per_cu * max_waves_per_simd; }
  constexpr uint32_t kfd_queues_per_pipe() const { return queues_per_pipe - first_kfd_queue; }
};

inline constexpr GpuGeometry kGpuGeometries[] = {
    // rocminfo of the MI308X node (realdata/debugfs/04): 80 CUs, 4 XCCs, 1420 MHz; hqds capture
    // (debugfs/01): KFD owns pipes 0-3, queues 2-7.
    {"mi308x", "gfx942", 4, 20, 4, 8, 64, 1420, 4, 8, 2},
    // AMD specifications: 304 CUs on 8 XCDs, 2100 MHz peak.
    {"mi300x", "gfx942", 8, 38, 4, 8, 64, 2100, 4, 8, 2},
    // AMD specifications: one GCD with 104 CUs, 1700 MHz peak.
    {"mi210", "gfx90a", 1, 104, 4, 8, 64, 1700, 4, 8, 2},
};

// nullptr for an unknown name (exact, lower case).
constexpr const GpuGeometry* gpu_geometry(std::string_view name) {
  for (const auto& g : kGpuGeometries)
    if (g.name == name) return &g;
  return nullptr;
}

}  // namespace gpreempt::sim
