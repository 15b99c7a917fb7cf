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

static SimTime transfer_ns(uint64_t bytes, double gbps) {
  // 1 GB/s moves one byte per nanosecond.
  return static_cast<SimTime>(std::ceil(static_cast<double>(bytes) / gbps));
}

SimTime GpuProfile::save_ns(uint64_t bytes) const {
  if (bytes == 0) return 0;
  return save_fixed_ns + transfer_ns(bytes, save_bandwidth_gbps);
}

SimTime GpuProfile::restore_ns(uint64_t bytes) const {
  if (bytes == 0) return 0;
  return restore_fixed_ns + transfer_ns(bytes, restore_bandwidth_gbps);
}

const char* to_string(CostBand b) {
  switch (b) {
    case CostBand::kLow: return "low";
    case CostBand::kCentral: return "central";
    case CostBand::kHigh: return "high";
  }
  return "central";
}

std::optional<CostBand> cost_band_by_name(std::string_view name) {
  if (name == "low") return CostBand::kLow;
  if (name == "central") return CostBand::kCentral;
  if (name == "high") return CostBand::kHigh;
  return std::nullopt;
}

void apply_cost_band(GpuProfile& p, CostBand b) {
  const auto ns = [b](const Band& band) { return static_cast<SimTime>(std::llround(band.at(b))); };
  p.cost_band = b;
  p.save_bandwidth_gbps = p.bands.save_bw_of_hbm.at(b) * p.hbm_bandwidth_gbps;
  p.restore_bandwidth_gbps = p.bands.restore_bw_of_hbm.at(b) * p.hbm_bandwidth_gbps;
  p.save_fixed_ns = ns(p.bands.trap_fixed_ns);
  p.restore_fixed_ns = ns(p.bands.trap_fixed_ns);
  p.unmap_latency_ns = ns(p.bands.unmap_latency_ns);
  p.map_latency_ns = ns(p.bands.map_latency_ns);
  p.grace_packet_ns = ns(p.bands.grace_packet_ns);
  p.suspend_copy_ns = ns(p.bands.suspend_copy_ns);
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
  apply_cost_band(p, CostBand::kCentral);
  return p;
}

GpuProfile mi300x_profile() {
  GpuProfile p = mi308x_profile();
  apply_geometry(p, *sim::gpu_geometry("mi300x"));
  apply_cost_band(p, CostBand::kCentral);
  return p;
}

GpuProfile mi210_profile() {
  GpuProfile p = mi308x_profile();
  apply_geometry(p, *sim::gpu_geometry("mi210"));
  // CDNA2: no TF32 or FP8 matrix types, half the FP16/BF16/INT8 matrix rate of CDNA3.
  p.matrix_tf32_flops_per_clk_cu = 256;
  p.matrix_fp16_flops_per_clk_cu = 1024;
  p.matrix_bf16_flops_per_clk_cu = 1024;
  p.matrix_fp8_flops_per_clk_cu = 1024;
  p.matrix_int8_flops_per_clk_cu = 1024;
  p.vector_fp32_flops_per_clk_cu = 128;
  p.vector_fp16_flops_per_clk_cu = 256;
  p.hbm_bandwidth_gbps = 1638.4;
  // One GCD with its own HBM2e: the save bandwidth band follows its HBM peak.
  apply_cost_band(p, CostBand::kCentral);
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
