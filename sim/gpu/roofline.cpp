#include "sim/gpu/roofline.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/gpu/kernel.h"

namespace gpreempt::sim::gpu {

std::optional<MathType> math_type_by_name(std::string_view name) {
  static constexpr std::pair<std::string_view, MathType> kNames[] = {
      {"fp64", MathType::kFp64}, {"fp32", MathType::kFp32}, {"tf32", MathType::kTf32},
      {"fp16", MathType::kFp16}, {"bf16", MathType::kBf16}, {"fp8", MathType::kFp8},
      {"int8", MathType::kInt8}};
  for (const auto& [n, t] : kNames)
    if (n == name) return t;
  return std::nullopt;
}

double flops_per_clk_cu(const GpuProfile& p, MathType type, bool matrix) {
  if (!matrix) {
    switch (type) {
      case MathType::kFp64: return p.vector_fp64_flops_per_clk_cu;
      case MathType::kFp16:
      case MathType::kBf16:
      case MathType::kFp8: return p.vector_fp16_flops_per_clk_cu;
      default: return p.vector_fp32_flops_per_clk_cu;  // fp32, tf32 and integer ALU work
    }
  }
  switch (type) {
    case MathType::kFp64: return p.matrix_fp64_flops_per_clk_cu;
    case MathType::kFp32: return p.matrix_fp32_flops_per_clk_cu;
    case MathType::kTf32: return p.matrix_tf32_flops_per_clk_cu;
    case MathType::kFp16: return p.matrix_fp16_flops_per_clk_cu;
    case MathType::kBf16: return p.matrix_bf16_flops_per_clk_cu;
    case MathType::kFp8: return p.matrix_fp8_flops_per_clk_cu;
    case MathType::kInt8: return p.matrix_int8_flops_per_clk_cu;
  }
  return p.matrix_fp32_flops_per_clk_cu;
}

uint64_t KernelShape::workgroups() const {
  uint64_t n = 1;
  for (int d = 0; d < 3; ++d) {
    const uint64_t g = std::max<uint32_t>(grid[d], 1), w = std::max<uint32_t>(workgroup[d], 1);
    n *= (g + w - 1) / w;
  }
  return n;
}

uint64_t KernelShape::waves(uint32_t wave_size) const {
  const uint64_t items = static_cast<uint64_t>(std::max<uint32_t>(workgroup[0], 1)) *
                         std::max<uint32_t>(workgroup[1], 1) * std::max<uint32_t>(workgroup[2], 1);
  return workgroups() * ((items + wave_size - 1) / wave_size);
}

SimTime roofline_ns(const GpuProfile& p, const KernelShape& k, double flops, double bytes,
                    MathType type, bool matrix) {
  const double simds = static_cast<double>(p.total_cus()) * p.simds_per_cu;
  const double used = std::min(1.0, static_cast<double>(k.waves(p.wave_size)) / simds);
  // flops per ns = per-CU rate × CUs × clocks per ns
  const double math = flops_per_clk_cu(p, type, matrix) * p.total_cus() * p.clock_mhz * 1e-3 *
                      p.math_efficiency * used;
  const double mem = p.hbm_bandwidth_gbps * p.hbm_efficiency * used;  // bytes per ns
  const double t = std::max(math > 0 ? flops / math : 0.0, mem > 0 ? bytes / mem : 0.0);
  return std::max<SimTime>(1, static_cast<SimTime>(std::ceil(t)));
}

uint64_t workgroup_rounds(const GpuProfile& p, const KernelShape& k) {
  const uint64_t wgs = k.workgroups();
  const uint64_t xccs = std::max<uint32_t>(p.num_xcc, 1);
  KernelSpec spec;
  spec.grid = k.grid;
  spec.workgroup = k.workgroup;
  spec.resources = k.resources;
  // What the engine's pooled slots of one XCC hold of it (engine.cpp fit()).
  const auto occ = occupancy(p, spec);
  const uint64_t xcc_units = static_cast<uint64_t>(p.cus_per_xcc) * p.max_waves_per_cu * kUnitsPerWaveSlot;
  const uint64_t cap = std::max<uint64_t>(
      1, occ ? std::min<uint64_t>(static_cast<uint64_t>(p.cus_per_xcc) * p.max_workgroups_per_cu,
                                  xcc_units / occ->wg_units)
             : p.cus_per_xcc);
  const uint64_t per_xcc = (wgs + xccs - 1) / xccs;
  return std::max<uint64_t>(1, (per_xcc + cap - 1) / cap);
}

SimTime wg_cost_for(const GpuProfile& p, const KernelShape& k, SimTime busy_ns) {
  const auto rounds = static_cast<SimTime>(workgroup_rounds(p, k));
  return std::max<SimTime>(1, (busy_ns + rounds - 1) / rounds);
}

}  // namespace gpreempt::sim::gpu
