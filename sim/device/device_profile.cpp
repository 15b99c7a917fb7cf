#include "device_profile.h"

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "common/error.h"
#include "topology_caps.h"
#include "gpu_geometry.h"

namespace gpreempt::sim {
namespace {

// The eight GPUs of the MI308X node the captures come from, in topology order (nodes 2..9):
// gpu_id from the hqds "Node N, gpu_id X:" headers (realdata/debugfs/01), BDFID and Uuid from the
// rocminfo capture of the same machine (realdata/debugfs/04).
const GpuInstance kMi308xGpus[] = {
    {0xf7bc, 2560, 128, 0xfb16d220f7154018ull},  {0xf05b, 32768, 136, 0x0f90c772ac666758ull},
    {0xeb40, 41984, 144, 0x7e0ae9d22f442501ull}, {0xc66d, 51200, 152, 0xb126f35cd74de9d1ull},
    {0xf220, 2816, 160, 0xc984c7d3e1c49e09ull},  {0xf5c7, 33024, 168, 0x7946f5e4c7b1e87cull},
    {0xeedc, 42240, 176, 0x18f82111596cc166ull}, {0xc3f1, 51456, 184, 0x21b6d61638a86f8cull},
};

// MI300X: the rocm-smi capture (realdata/debugfs/10, a 4-GPU machine) gives PCI buses and unique
// ids; it shows no gpu_ids, so those are synthetic, as are GPUs 5..8 (docs/sim-device-profiles.md).
const GpuInstance kMi300xGpus[] = {
    {0x5e2a, 0x2600, 128, 0x8d1457e2c20f59d2ull},
    {0x9b71, 0x4600, 136, 0xb4fa34630e85d42aull},
    {0x3c94, 0x6500, 144, 0xe8986800e182538aull},
    {0xd40f, 0x8500, 152, 0xeff71edc82169115ull},
    {0x71e3, 0xa600, 160, 0},
    {0x2ab8, 0xc600, 168, 0},
    {0xe65d, 0xe500, 176, 0},
    {0x8c06, 0xf500, 184, 0},
};

const GpuInstance kMi210Gpus[] = {
    {0x6699, 0x0300, 128, 0},
    {0x1a2b, 0x2300, 136, 0},
    {0x4d5e, 0x4300, 144, 0},
    {0x7f80, 0x6300, 152, 0},
};

// kfd_topology_set_capabilities() and the CRAT-derived bits of a GFX9 data-center part: 4
// address watch points, doorbell type 2.0, debug trap + wave launch override/mode, firmware
// debug support, EDC/RAS, SVM, the ASIC revision; precise memory operations from GFX 9.4.2;
// per-queue reset on 9.4.3. No profile is coherent with the host (rocminfo "Coherent Host
// Access: FALSE" on the MI308X).
uint32_t gfx9_capability(uint32_t revision, bool precise_memory, bool per_queue_reset) {
  using namespace caps;
  uint32_t c = HSA_CAP_WATCH_POINTS_SUPPORTED | (2u << HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT) |
               (HSA_CAP_DOORBELL_TYPE_2_0 << HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT) |
               HSA_CAP_AQL_QUEUE_DOUBLE_MAP | HSA_CAP_TRAP_DEBUG_SUPPORT |
               HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED |
               HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED | HSA_CAP_MEM_EDCSUPPORTED |
               HSA_CAP_RASEVENTNOTIFY | ((revision & 0xf) << HSA_CAP_ASIC_REVISION_SHIFT) |
               HSA_CAP_SRAM_EDCSUPPORTED | HSA_CAP_SVMAPI_SUPPORTED |
               HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED;
  if (precise_memory) c |= HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED;
  if (per_queue_reset) c |= HSA_CAP_PER_QUEUE_RESET_SUPPORTED;
  return c;
}

// kfd_queue_ctx_save_restore_size() for GFX9: per XCC, a control stack of 8 bytes per wave
// (+8, + the 40-byte save-area header, page aligned) and 0x95000 bytes of wave state per CU
// (512 KiB VGPR/AGPR + 16 KiB SGPR + 64 KiB LDS + 4 KiB HW registers). The MI308X numbers this
// gives (0x2000, 0xba6000) are the ones its captured MQDs carry.
void set_cwsr_sizes(DeviceProfile& p) {
  const uint32_t cu_per_xcc = p.cu_count / p.num_xcc;
  const uint32_t waves = std::min(cu_per_xcc * 40, p.array_count / p.simd_arrays_per_engine * 512);
  auto page_align = [](uint32_t v) { return (v + 4095u) & ~4095u; };
  p.ctl_stack_size = page_align(40 + waves * 8 + 8);
  p.cwsr_size = p.ctl_stack_size + page_align(cu_per_xcc * 0x95000u);
}

// The compute geometry every other part of the simulator shares (gpu_geometry.h).
void set_geometry(DeviceProfile& p, std::string_view name) {
  const GpuGeometry& g = *gpu_geometry(name);
  p.gfx_arch = std::string(g.gfx_target);
  p.num_xcc = g.num_xcc;
  p.cu_count = g.cu_count();
  p.simd_per_cu = g.simds_per_cu;
  p.max_waves_per_simd = g.max_waves_per_simd;
  p.wave_front_size = g.wave_size;
  p.max_engine_clk_fcompute = g.clock_mhz;
  p.pipes_per_mec = g.pipes_per_mec;
  p.queues_per_pipe = g.queues_per_pipe;
  p.first_kfd_queue = g.first_kfd_queue;
  p.num_cp_queues = g.pipes_per_mec * g.kfd_queues_per_pipe();
}

template <std::size_t N>
void take_gpus(DeviceProfile& p, const GpuInstance (&all)[N], uint32_t n, uint32_t dflt) {
  if (n == 0) n = dflt;
  if (n > N)
    throw gpreempt::Error(EINVAL, "profile " + p.name + " supports at most " + std::to_string(N) +
                                " GPUs, " + std::to_string(n) + " requested");
  p.gpus.assign(all, all + n);
}

// HBM per GPU (GiB, bus width, memory clock) as the product datasheets give it, and the CPU
// nodes' memory, which no capture records: 512 GiB split over the nodes (the machine's own
// memory replaces it when the CPU nodes are the host's, the default).
// The sysfs "type" of a GPU cache: HSA_CACHE_TYPE_DATA (1) or INSTRUCTION (2), with HSACU (8) —
// kfd_crat.c's translation of the CRAT flags DATA_CACHE / INST_CACHE and SIMD_CACHE.
constexpr uint32_t kDataCache = 0x1 | 0x8;
constexpr uint32_t kInstCache = 0x2 | 0x8;

void set_memory(DeviceProfile& p, uint64_t vram_bytes, uint32_t width, uint32_t clk_mhz) {
  p.vram_bytes = vram_bytes;
  p.vram_width = width;
  p.vram_clk_max_mhz = clk_mhz;
  p.cpu_mem_per_node = (512ull << 30) / p.cpu_nodes;
}

DeviceProfile mi308x(uint32_t n) {
  DeviceProfile p;
  p.name = "mi308x";
  p.marketing_name = "AMD Instinct MI308X";
  p.topology_name = "ip discovery";
  set_geometry(p, "mi308x");
  p.gfx_target_version = 90402;
  p.array_count = 16;
  p.simd_arrays_per_engine = 1;
  p.lds_size_in_kb = 64;
  p.num_gws = 64;
  p.caches_count = 0;
  p.device_id = 0x74a2;
  p.revision_id = 1;
  p.subsystem_device_id = 0x74a2;
  p.num_sdma_engines = 2;
  p.num_sdma_xgmi_engines = 6;
  p.num_sdma_queues_per_engine = 8;
  set_cwsr_sizes(p);
  p.fw_version = 185;
  p.sdma_fw_version = 24;
  p.capability = gfx9_capability(p.revision_id, true, true);
  p.capability2 = 0;
  p.debug_prop = caps::gfx9_debug_prop(true);
  p.cpu_nodes = 2;
  p.cpu_cores_per_node = 112;
  p.cpu_max_engine_clk_ccompute = 3800;
  // R04: every GPU of the captured node reports 201310208 KB of VRAM, 16 MiB under the
  // datasheet's 192 GiB (what the driver keeps for itself).
  set_memory(p, (192ull << 30) - (16ull << 20), 8192, 1300);
  // GFX 9.4.3: 32 KiB vector L1, the SQC's 64 KiB instruction and 16 KiB scalar caches, 4 MiB L2
  // per XCD, the 256 MiB Infinity Cache as L3.
  p.gpu_caches = {{1, 32, 128, kDataCache}, {1, 64, 64, kInstCache}, {1, 16, 64, kDataCache},
                  {2, 4096, 128, kDataCache}, {3, 262144, 64, kDataCache}};
  p.hqd_reg_base = 0xc914;
  p.xcc_reg_offsets = {0x0, 0xc0000, 0x100000, 0x1c0000};
  p.sdma_reg_bases = {0x4e40, 0x6640, 0xe54c0, 0xe64c0, 0x104e40, 0x106640, 0x1e54c0, 0x1e64c0};
  p.sdma_rlc_stride = 0x160;
  p.mqd_stride_per_xcc = 0x3000;
  p.first_vmid = 3;
  p.per_process_queue_cap = 255;
  take_gpus(p, kMi308xGpus, n, 8);
  return p;
}

DeviceProfile mi300x(uint32_t n) {
  DeviceProfile p = mi308x(0);
  p.name = "mi300x";
  p.marketing_name = "AMD Instinct MI300X";
  set_geometry(p, "mi300x");
  p.array_count = 32;
  set_cwsr_sizes(p);
  p.device_id = 0x74a1;
  p.revision_id = 0;
  p.subsystem_device_id = 0x74a1;
  p.capability = gfx9_capability(p.revision_id, true, true);
  p.fw_version = 138;
  p.sdma_fw_version = 19;
  p.num_sdma_xgmi_engines = 14;
  // XCCs 4..7 and SDMA engines 8..15 are not in any capture: the MI308X pattern repeated one
  // 0x200000-byte aperture further up (docs/sim-device-profiles.md).
  for (uint32_t i = 0; i < 4; ++i) p.xcc_reg_offsets.push_back(p.xcc_reg_offsets[i] + 0x200000);
  for (uint32_t i = 0; i < 8; ++i) p.sdma_reg_bases.push_back(p.sdma_reg_bases[i] + 0x200000);
  take_gpus(p, kMi300xGpus, n, 4);
  return p;
}

DeviceProfile mi210(uint32_t n) {
  DeviceProfile p;
  p.name = "mi210";
  p.marketing_name = "AMD Instinct MI210";
  p.topology_name = "aldebaran";
  set_geometry(p, "mi210");
  p.gfx_target_version = 90010;
  p.array_count = 8;
  p.simd_arrays_per_engine = 1;
  p.lds_size_in_kb = 64;
  p.num_gws = 64;
  p.device_id = 0x740f;
  p.revision_id = 2;
  p.subsystem_device_id = 0x0c34;
  p.num_sdma_engines = 2;
  p.num_sdma_xgmi_engines = 3;
  p.num_sdma_queues_per_engine = 8;
  set_cwsr_sizes(p);
  p.fw_version = 78;
  p.sdma_fw_version = 8;
  p.capability = gfx9_capability(p.revision_id, true, false);
  p.debug_prop = caps::gfx9_debug_prop(false);
  p.cpu_nodes = 1;
  p.cpu_cores_per_node = 64;
  p.cpu_max_engine_clk_ccompute = 3500;
  set_memory(p, 64ull << 30, 4096, 1600);
  // gfx_v9_0.c for Aldebaran: GB_ADDR_CONFIG & 0x0c188800 (the register, 0 here) | 0x22014042.
  p.gb_addr_config = 0x22014042;
  // kfd_crat.c's aldebaran_cache_info: 16 KiB TCP, 64 KiB SQC instruction, 16 KiB SQC data, 8 MiB L2.
  p.gpu_caches = {{1, 16, 64, kDataCache}, {1, 64, 64, kInstCache}, {1, 16, 64, kDataCache},
                  {2, 8192, 128, kDataCache}};
  p.hqd_reg_base = 0xfea4;
  p.xcc_reg_offsets = {0x0};
  p.sdma_reg_bases = {0x4e40, 0x6640, 0xe54c0, 0xe64c0, 0x104e40};
  p.sdma_rlc_stride = 0x160;
  p.mqd_stride_per_xcc = 0x1000;
  p.first_vmid = 8;
  p.per_process_queue_cap = 127;
  take_gpus(p, kMi210Gpus, n, 1);
  return p;
}

}  // namespace

std::vector<std::string> profile_names() {
  return {"mi308x", "mi300x", "mi210"};
}

DeviceProfile make_profile(std::string_view name, uint32_t num_gpus) {
  if (name == "mi308x") return mi308x(num_gpus);
  if (name == "mi300x") return mi300x(num_gpus);
  if (name == "mi210") return mi210(num_gpus);
  std::string valid;
  for (const auto& n : profile_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw gpreempt::Error(EINVAL, "unknown device profile '" + std::string(name) +
                              "' (valid: " + valid + ")");
}

}  // namespace gpreempt::sim
