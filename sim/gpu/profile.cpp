#include "sim/gpu/profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sim/device/gpu_geometry.h"

namespace gpreempt::sim::gpu {

SimTime GpuProfile::grace_ns(uint32_t grace_kclk) const {
  const uint64_t units = grace_kclk == 0xffffffffu ? default_grace_kclk
                                                   : std::max<uint32_t>(grace_kclk, 1);
  // units * 1000 clocks / (clock_mhz * 1e6 Hz) seconds = units * 1e6 / clock_mhz ns
  return static_cast<SimTime>(units * 1'000'000ull / clock_mhz);
}

static SimTime transfer_ns(uint64_t waves, uint64_t bytes_per_wave, double gbps) {
  // 1 GB/s moves one byte per nanosecond.
  return static_cast<SimTime>(std::ceil(static_cast<double>(waves * bytes_per_wave) / gbps));
}

SimTime GpuProfile::save_ns(uint64_t waves) const {
  if (waves == 0) return 0;
  return save_fixed_ns + transfer_ns(waves, wave_state_bytes, save_bandwidth_gbps);
}

SimTime GpuProfile::restore_ns(uint64_t waves) const {
  if (waves == 0) return 0;
  return restore_fixed_ns + transfer_ns(waves, wave_state_bytes, restore_bandwidth_gbps);
}

void apply_geometry(GpuProfile& p, const sim::GpuGeometry& g) {
  p.name = std::string(g.name);
  p.gfx_target = std::string(g.gfx_target);
  p.num_xcc = g.num_xcc;
  p.cus_per_xcc = g.cus_per_xcc;
  p.simds_per_cu = g.simds_per_cu;
  p.max_waves_per_cu = g.max_waves_per_cu();
  p.wave_size = g.wave_size;
  p.clock_mhz = g.clock_mhz;
  p.compute_pipes = g.pipes_per_mec;
  p.queues_per_pipe = g.kfd_queues_per_pipe();
}

GpuProfile mi308x_profile() {
  GpuProfile p;
  apply_geometry(p, *sim::gpu_geometry("mi308x"));
  return p;
}

GpuProfile mi300x_profile() {
  GpuProfile p = mi308x_profile();
  apply_geometry(p, *sim::gpu_geometry("mi300x"));
  return p;
}

GpuProfile mi210_profile() {
  GpuProfile p = mi308x_profile();
  apply_geometry(p, *sim::gpu_geometry("mi210"));
  // One GCD with its own HBM2e: less bandwidth for the wave save than the MI300 parts.
  p.save_bandwidth_gbps = 200.0;
  p.restore_bandwidth_gbps = 200.0;
  // CDNA2: no TF32 or FP8 matrix types, half the FP16/BF16/INT8 matrix rate of CDNA3.
  p.matrix_tf32_flops_per_clk_cu = 256;
  p.matrix_fp16_flops_per_clk_cu = 1024;
  p.matrix_bf16_flops_per_clk_cu = 1024;
  p.matrix_fp8_flops_per_clk_cu = 1024;
  p.matrix_int8_flops_per_clk_cu = 1024;
  p.vector_fp32_flops_per_clk_cu = 128;
  p.vector_fp16_flops_per_clk_cu = 256;
  p.hbm_bandwidth_gbps = 1638.4;
  return p;
}

std::optional<GpuProfile> profile_by_name(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "mi308x") return mi308x_profile();
  if (n == "mi300x") return mi300x_profile();
  if (n == "mi210") return mi210_profile();
  return std::nullopt;
}

std::vector<std::string> profile_names() { return {"mi308x", "mi300x", "mi210"}; }

}  // namespace gpreempt::sim::gpu
