// Device profiles of the GPU execution model. Every number here is explained, with its source or
// the reasoning behind it, in docs/sim-model.md ("estimate" where nothing public exists).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/device/gpu_geometry.h"

namespace gpreempt::sim::gpu {

using SimTime = int64_t;  // simulated nanoseconds

// Where in an uncertainty band a cost is taken: kLow is the cheapest preemption (fastest save,
// shortest latency), kHigh the most expensive.
enum class CostBand { kLow, kCentral, kHigh };
const char* to_string(CostBand b);
std::optional<CostBand> cost_band_by_name(std::string_view name);

struct Band {
  double low = 0, central = 0, high = 0;  // in cost order: low = cheapest preemption
  double at(CostBand b) const { return b == CostBand::kLow ? low : b == CostBand::kHigh ? high : central; }
};

// Each band with its reasoning in docs/sim-model.md §5. Bandwidths are fractions of the device's
// HBM peak, so the band follows the part; `low` is the fast (cheap) end.
struct CostBands {
  Band save_bw_of_hbm{0.8, 0.2457, 0.07547};
  Band restore_bw_of_hbm{0.8, 0.2457, 0.07547};
  Band trap_fixed_ns{2'000, 5'000, 10'000};
  Band unmap_latency_ns{10'000, 30'000, 100'000};
  Band map_latency_ns{10'000, 30'000, 100'000};
  Band grace_packet_ns{1'000, 2'000, 5'000};
  Band suspend_copy_ns{5'000, 10'000, 30'000};
};

struct GpuProfile {
  std::string name;        // "mi308x"
  std::string gfx_target;  // "gfx942"

  // Compute resources.
  uint32_t num_xcc = 4;
  uint32_t cus_per_xcc = 20;
  uint32_t simds_per_cu = 4;
  uint32_t max_waves_per_cu = 32;
  uint32_t max_workgroups_per_cu = 16;
  uint32_t wave_size = 64;
  uint32_t clock_mhz = 1420;  // shader clock; grace periods are counted in 1,000 of these

  // Hardware scheduler (HWS firmware on the MEC).
  uint32_t compute_pipes = 4;       // MEC pipes KFD hands to HWS
  uint32_t queues_per_pipe = 6;     // HQD slots per pipe KFD owns (per XCC; a queue uses one on each)
  SimTime oversubscription_quantum_ns = 1'000'000;
  uint32_t default_grace_kclk = 1;    // grace period when the caller passes 0xffffffff
  SimTime preemption_timeout_ns = 9'000'000'000;  // queue_preemption_timeout_ms

  // What one CU physically holds (CDNA2/CDNA3 ISA): the unified VGPR+AGPR file per SIMD lane,
  // the SGPR file per SIMD, LDS per CU.
  uint32_t vgprs_per_simd_lane = 512;
  uint32_t sgprs_per_simd = 800;
  uint32_t lds_bytes_per_cu = 64 * 1024;
  // One CU's share of a queue's context-save area as KFD sizes it (kfd_queue.c, gfx9.4.x/MI200).
  uint64_t cwsr_vgpr_bytes_per_cu = 0x80000;
  uint64_t cwsr_sgpr_bytes_per_cu = 0x4000;
  uint64_t cwsr_lds_bytes_per_cu = 0x10000;
  uint64_t cwsr_hwreg_bytes_per_cu = 0x1000;
  uint32_t cwsr_control_bytes_per_wave = 8;
  uint32_t cwsr_debugger_bytes_per_wave = 32;

  // Costs nothing public measures, each a band (docs/sim-model.md §5): the values in force below
  // are the band's point `cost_band` (apply_cost_band); a later override replaces one of them.
  CostBand cost_band = CostBand::kCentral;
  CostBands bands;
  SimTime unmap_latency_ns = 0;      // UNMAP_QUEUES from the HIQ until the CP starts preempting
  SimTime map_latency_ns = 0;        // RUNLIST/MAP_QUEUES until the queues fetch again
  SimTime grace_packet_ns = 0;       // one WRITE_DATA of CP_IQ_WAIT_TIME2 (twice per non-default grace)
  SimTime suspend_copy_ns = 0;       // HDP flush + the work item copying wave-state info to user memory
  double save_bandwidth_gbps = 0;    // device-wide bytes/ns = GB/s
  double restore_bandwidth_gbps = 0;
  SimTime save_fixed_ns = 0;         // trap-handler entry and exit of the waves being saved
  SimTime restore_fixed_ns = 0;

  // Command processor.
  SimTime packet_overhead_ns = 2'000;  // fetch + decode of one AQL packet before waves launch

  // Roofline of one kernel's own duration (gpreempt.sim's torch mode: docs/sim-model.md §11).
  // Dense math per compute unit per clock, by data type: matrix cores (GEMM, convolution) and
  // vector ALUs (elementwise, reductions). A data type a part lacks runs at the next wider one.
  double matrix_fp64_flops_per_clk_cu = 256;
  double matrix_fp32_flops_per_clk_cu = 256;
  double matrix_tf32_flops_per_clk_cu = 1024;
  double matrix_fp16_flops_per_clk_cu = 2048;
  double matrix_bf16_flops_per_clk_cu = 2048;
  double matrix_fp8_flops_per_clk_cu = 4096;
  double matrix_int8_flops_per_clk_cu = 4096;
  double vector_fp64_flops_per_clk_cu = 128;
  double vector_fp32_flops_per_clk_cu = 256;
  double vector_fp16_flops_per_clk_cu = 512;
  double hbm_bandwidth_gbps = 5300;  // device memory, bytes per ns
  double math_efficiency = 0.7;      // achieved / peak math of a large library kernel
  double hbm_efficiency = 0.8;       // achieved / peak bandwidth of a streaming kernel

  uint32_t hqd_slots() const { return compute_pipes * queues_per_pipe; }
  uint32_t total_cus() const { return num_xcc * cus_per_xcc; }
  // Grace period in 1,000-clock units as nanoseconds (GFX9 code turns 0 into 1).
  SimTime grace_ns(uint32_t grace_kclk) const;
  // CWSR cost of `bytes` of saved (restored) wave state on the whole device; 0 for none.
  SimTime save_ns(uint64_t bytes) const;
  SimTime restore_ns(uint64_t bytes) const;
};

// Sets the banded costs in force to the point `b` of `p.bands` (and p.cost_band = b).
void apply_cost_band(GpuProfile& p, CostBand b);

// Sets the compute geometry (XCCs, CUs, waves, clock, HQD slots KFD owns) from the one table
// both the KFD side and this model derive from (sim/device/gpu_geometry.h); timing stays.
void apply_geometry(GpuProfile& p, const sim::GpuGeometry& g);

GpuProfile mi308x_profile();
GpuProfile mi300x_profile();
GpuProfile mi210_profile();

// "mi308x", "mi300x", "mi210" (case-insensitive); nullopt otherwise.
std::optional<GpuProfile> profile_by_name(std::string_view name);
std::vector<std::string> profile_names();

}  // namespace gpreempt::sim::gpu
