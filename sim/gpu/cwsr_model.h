// What one resident wave and one resident workgroup of a kernel occupy on a compute unit, and
// therefore what the trap handler must save and restore for them (CWSR). One model for kfdsimd
// and the discrete-event evaluation: occupancy and saved bytes come from the same register
// footprint, so a save can never exceed what a CU physically holds. docs/sim-model.md §5.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpreempt::sim::gpu {

struct GpuProfile;
struct KernelSpec;

// A kernel's register and LDS resources, as its code object declares them (the real kernel
// descriptor's compute_pgm_rsrc1 granules and the AQL packet's group_segment_size).
struct KernelResources {
  uint32_t vgprs = 64;      // architectural VGPRs per lane
  uint32_t agprs = 0;       // accumulation VGPRs per lane (MFMA); share the unified file
  uint32_t sgprs = 32;      // scalar registers per wave
  uint32_t lds_bytes = 0;   // LDS per workgroup
  bool operator==(const KernelResources&) const = default;
};

// The register model by kernel kind, for kernels whose resources nobody declared (torch_mode's
// priced operators, workload presets): see docs/sim-model.md §5 "register model".
enum class KernelKind : uint8_t { kGeneric, kMatrix, kVector };
KernelResources resources_for(KernelKind kind);
// "generic" | "matrix" | "vector"; nullopt otherwise.
std::optional<KernelKind> kernel_kind_by_name(std::string_view name);
const char* to_string(KernelKind kind);

// How a kernel fits a CU.
struct Occupancy {
  uint32_t waves_per_simd = 0;   // bounded by the VGPR and SGPR files and the wave slots
  uint32_t wgs_per_cu = 0;       // bounded by waves, LDS and the workgroup slots
  uint64_t wave_bytes = 0;       // saved per resident wave: VGPR+AGPR, SGPR, HWREG, control
  uint64_t wg_bytes = 0;         // saved per resident workgroup: its waves and its LDS
  // Share of a CU one resident workgroup takes (a CU is max_waves_per_cu × kUnitsPerWaveSlot):
  // 1/n of it when n workgroups of the kernel fit one CU by registers, waves and LDS, so
  // co-running kernels never overfill a CU on average.
  uint64_t wg_units = 0;
};

// Units of CU capacity the engine accounts in, per wave slot of the profile: 32 × 840 is divisible
// by most workgroup counts per CU (all up to 8), so a workgroup's share is exact or nearly so.
inline constexpr uint64_t kUnitsPerWaveSlot = 840;

// The kernel's occupancy on `p`, or nullopt with `error` naming the kernel when one workgroup
// cannot fit a CU (too many registers, waves or LDS).
std::optional<Occupancy> occupancy(const GpuProfile& p, const KernelSpec& k,
                                   std::string* error = nullptr);

// Bytes of one CU's context-save area as KFD sizes it (kfd_queue.c): the VGPR, SGPR, LDS and
// HWREG areas plus a control-stack and a debugger entry per wave slot.
uint64_t cwsr_bytes_per_cu(const GpuProfile& p);

}  // namespace gpreempt::sim::gpu
