// How long one kernel keeps the device busy, from what it computes and moves (a roofline over
// the device profile), and the per-workgroup cost that makes the engine reproduce that time.
// gpreempt.sim's torch mode prices every ATen operator this way; docs/sim-model.md §11.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/gpu/cwsr_model.h"
#include "sim/gpu/profile.h"

namespace gpreempt::sim::gpu {

enum class MathType { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8 };
// "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8" (torch_mode's names); nullopt otherwise.
std::optional<MathType> math_type_by_name(std::string_view name);

// Dense math per compute unit per clock for `type` on the matrix cores or the vector ALUs.
double flops_per_clk_cu(const GpuProfile& p, MathType type, bool matrix);

struct KernelShape {
  KernelShape() = default;
  KernelShape(std::array<uint32_t, 3> g, std::array<uint32_t, 3> wg, KernelResources r = {})
      : grid(g), workgroup(wg), resources(r) {}
  std::array<uint32_t, 3> grid{1, 1, 1};       // work-items
  std::array<uint32_t, 3> workgroup{1, 1, 1};  // work-items per workgroup
  KernelResources resources;                   // its occupancy (cwsr_model.h)
  uint64_t workgroups() const;
  uint64_t waves(uint32_t wave_size) const;
};

// Busy time of the kernel alone on the device, without the CP's packet overhead:
// max(flops / achieved math rate, bytes / achieved bandwidth), both scaled down when the grid has
// fewer waves than the device has SIMDs (a small grid cannot use the whole GPU). At least 1 ns.
SimTime roofline_ns(const GpuProfile& p, const KernelShape& k, double flops, double bytes,
                    MathType type, bool matrix);

// Rounds of workgroups the engine needs for `k` on an idle device (sim-model §3: workgroups dealt
// round-robin to the XCCs, each XCC bounded by the kernel's occupancy; a kernel that cannot fit a
// CU at all counts as one workgroup per CU, the engine rejects it when it is dispatched).
uint64_t workgroup_rounds(const GpuProfile& p, const KernelShape& k);

// The workgroup cost that makes the engine run `k` for `busy_ns` when alone (rounds × cost).
SimTime wg_cost_for(const GpuProfile& p, const KernelShape& k, SimTime busy_ns);

}  // namespace gpreempt::sim::gpu
