#include "sim/gpu/cwsr_model.h"

#include <algorithm>

#include "sim/gpu/kernel.h"
#include "sim/gpu/profile.h"

namespace gpreempt::sim::gpu {

namespace {

uint64_t round_up(uint64_t v, uint64_t granule) { return (v + granule - 1) / granule * granule; }

constexpr uint32_t kLanes = 64;           // a wave64's VGPR is 64 lanes × 4 B
constexpr uint32_t kVgprGranule = 8;      // gfx90a/gfx942 VGPR allocation granule
constexpr uint32_t kSgprGranule = 16;     // GFX9 SGPR allocation granule
constexpr uint32_t kMaxVgprs = 256;       // architectural VGPRs (and AGPRs) a wave may name
constexpr uint32_t kMaxSgprs = 102;       // user SGPRs on GFX9
constexpr uint32_t kLdsGranule = 512;     // GFX9 LDS allocation granule (128 dwords)

}  // namespace

KernelResources resources_for(KernelKind kind) {
  switch (kind) {
    // A library GEMM/convolution tile on the matrix cores: 128 VGPRs + 128 AGPRs of
    // accumulators, about 96 SGPRs, and 32 KiB of LDS for the A/B tiles of a 256-item workgroup.
    case KernelKind::kMatrix: return {128, 128, 96, 32 * 1024};
    // An elementwise or reduction kernel: few registers, no LDS worth saving.
    case KernelKind::kVector: return {32, 0, 32, 0};
    case KernelKind::kGeneric: break;
  }
  return {};
}

std::optional<KernelKind> kernel_kind_by_name(std::string_view name) {
  if (name == "generic") return KernelKind::kGeneric;
  if (name == "matrix") return KernelKind::kMatrix;
  if (name == "vector") return KernelKind::kVector;
  return std::nullopt;
}

const char* to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::kMatrix: return "matrix";
    case KernelKind::kVector: return "vector";
    case KernelKind::kGeneric: break;
  }
  return "generic";
}

uint64_t cwsr_bytes_per_cu(const GpuProfile& p) {
  return p.cwsr_vgpr_bytes_per_cu + p.cwsr_sgpr_bytes_per_cu + p.cwsr_lds_bytes_per_cu +
         p.cwsr_hwreg_bytes_per_cu +
         static_cast<uint64_t>(p.max_waves_per_cu) *
             (p.cwsr_control_bytes_per_wave + p.cwsr_debugger_bytes_per_wave);
}

std::optional<Occupancy> occupancy(const GpuProfile& p, const KernelSpec& k, std::string* error) {
  const KernelResources& r = k.resources;
  const uint32_t wpw = std::max<uint32_t>(k.waves_per_workgroup(p.wave_size), 1);
  const uint32_t simds = std::max<uint32_t>(p.simds_per_cu, 1);
  const uint32_t slots_per_simd = std::max<uint32_t>(p.max_waves_per_cu / simds, 1);
  auto fail = [&](const std::string& why) -> std::optional<Occupancy> {
    if (error) *error = "kernel '" + k.name + "': " + why + " (docs/sim-model.md §5)";
    return std::nullopt;
  };
  if (r.vgprs > kMaxVgprs || r.agprs > kMaxVgprs)
    return fail("asks for " + std::to_string(r.vgprs) + " VGPRs and " + std::to_string(r.agprs) +
                " AGPRs; a wave can name at most " + std::to_string(kMaxVgprs) + " of each");
  if (r.sgprs > kMaxSgprs)
    return fail("asks for " + std::to_string(r.sgprs) + " SGPRs; a wave can name at most " +
                std::to_string(kMaxSgprs));
  // The unified file: AGPRs start at the next multiple of 4 after the architectural VGPRs.
  const uint64_t vgpr_alloc = round_up(round_up(r.vgprs, 4) + r.agprs, kVgprGranule);
  const uint64_t sgpr_alloc = round_up(std::max<uint32_t>(r.sgprs, 1), kSgprGranule);
  uint64_t wps = slots_per_simd;
  if (vgpr_alloc > 0) wps = std::min<uint64_t>(wps, p.vgprs_per_simd_lane / vgpr_alloc);
  wps = std::min<uint64_t>(wps, p.sgprs_per_simd / sgpr_alloc);
  const uint64_t waves_per_cu = wps * simds;
  const uint64_t lds = round_up(r.lds_bytes, kLdsGranule);
  uint64_t wgs_by_lds = UINT64_MAX;
  if (lds > 0) wgs_by_lds = p.lds_bytes_per_cu / lds;
  const uint64_t wgs_by_waves = waves_per_cu / wpw;
  const uint64_t wgs_by_resources = std::min(wgs_by_waves, wgs_by_lds);
  const uint64_t wgs = std::min<uint64_t>(wgs_by_resources, p.max_workgroups_per_cu);
  if (wgs == 0) {
    return fail("one workgroup of " + std::to_string(wpw) + " waves × " +
                std::to_string(vgpr_alloc) + " VGPRs+AGPRs, " + std::to_string(sgpr_alloc) +
                " SGPRs and " + std::to_string(lds) + " B of LDS does not fit a compute unit (" +
                std::to_string(waves_per_cu) + " waves of it fit, " +
                std::to_string(p.lds_bytes_per_cu) + " B of LDS)");
  }
  Occupancy o;
  o.waves_per_simd = static_cast<uint32_t>(wps);
  o.wgs_per_cu = static_cast<uint32_t>(wgs);
  // The trap handler saves what a wave has allocated: its VGPRs+AGPRs over 64 lanes, its SGPRs,
  // and its share of the HWREG area; KFD adds a control-stack and a debugger entry per wave.
  const uint64_t hwreg_per_wave = p.cwsr_hwreg_bytes_per_cu / std::max<uint32_t>(p.max_waves_per_cu, 1);
  o.wave_bytes = vgpr_alloc * kLanes * 4 + sgpr_alloc * 4 + hwreg_per_wave +
                 p.cwsr_control_bytes_per_wave + p.cwsr_debugger_bytes_per_wave;
  o.wg_bytes = o.wave_bytes * wpw + lds;
  // A CU is max_waves_per_cu × kUnitsPerWaveSlot units; a workgroup takes 1/n of them, n the
  // workgroups of this kernel that fit one CU by registers, waves and LDS. The engine pools a
  // whole XCC, so this share (fragmentation included) is what keeps every limit there.
  const uint64_t cu_units = static_cast<uint64_t>(p.max_waves_per_cu) * kUnitsPerWaveSlot;
  o.wg_units = (cu_units + wgs_by_resources - 1) / wgs_by_resources;
  return o;
}

}  // namespace gpreempt::sim::gpu
