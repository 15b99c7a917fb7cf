// A simulated machine's hardware description: what topology reports, what the debug-trap device
// snapshot reports, and the slot geometry the debugfs renderers lay out.
//
// Every number's source (a real capture, the kernel source as docs/kfd-interface.md restates it,
// or a derivation) is documented in docs/sim-device-profiles.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::sim {

// One GPU as KFD's topology shows it. Values that differ between GPUs of the same machine (ids,
// PCI location, serial) live here; the per-model values live in DeviceProfile.
struct GpuInstance {
  uint32_t gpu_id = 0;       // 16-bit topology hash, never 0
  uint32_t location_id = 0;  // PCI bus/dev/fn (rocminfo BDFID)
  uint32_t drm_render_minor = 0;
  uint64_t unique_id = 0;  // rocminfo "Uuid: GPU-<hex>"
};

// One kind of GPU cache as topology's caches/<n>/properties shows it (kfd_crat.c's
// kfd_gpu_cache_info tables): level, KiB, line size, HSA_CACHE_TYPE_* bits.
struct GpuCache {
  uint32_t level = 0;
  uint32_t size_kb = 0;
  uint32_t line_size = 0;
  uint32_t type = 0;
};

struct DeviceProfile {
  std::string name;            // lookup key: "mi308x", "mi300x", "mi210"
  std::string marketing_name;  // for people
  std::string topology_name;   // nodes/N/name (amdgpu ASIC name, lower case)
  std::string gfx_arch;        // "gfx942"

  // Compute geometry (topology properties of a GPU node).
  uint32_t gfx_target_version = 0;  // major*10000 + minor*100 + stepping
  uint32_t num_xcc = 1;
  uint32_t cu_count = 0;  // compute units of the whole GPU (all XCCs)
  uint32_t simd_per_cu = 4;
  uint32_t array_count = 0;  // shader arrays, all XCCs (= shader engines x arrays/engine)
  uint32_t simd_arrays_per_engine = 1;
  uint32_t max_waves_per_simd = 8;
  uint32_t lds_size_in_kb = 64;
  uint32_t gds_size_in_kb = 0;
  uint32_t num_gws = 0;
  uint32_t wave_front_size = 64;
  uint32_t max_slots_scratch_cu = 32;
  uint32_t caches_count = 0;  // unused: the count shown is gpu_caches.size()
  std::vector<GpuCache> gpu_caches;
  // GET_TILE_CONFIG's gb_addr_config: amdgpu's value with every hardware-read bit 0 (registers
  // read 0 in the simulation).
  uint32_t gb_addr_config = 0;
  uint32_t vendor_id = 0x1002;
  uint32_t device_id = 0;
  uint32_t revision_id = 0;
  uint32_t subsystem_vendor_id = 0x1002;
  uint32_t subsystem_device_id = 0;
  uint64_t hive_id = 0;
  uint32_t num_sdma_engines = 0;
  uint32_t num_sdma_xgmi_engines = 0;
  uint32_t num_sdma_queues_per_engine = 0;
  uint32_t num_cp_queues = 0;  // KFD-owned CP queue slots (topology value)
  uint32_t cwsr_size = 0;
  uint32_t ctl_stack_size = 0;
  uint32_t max_engine_clk_fcompute = 0;  // MHz
  uint32_t fw_version = 0;               // MEC firmware
  uint32_t sdma_fw_version = 0;
  uint32_t capability = 0;
  uint32_t capability2 = 0;
  uint64_t debug_prop = 0;
  uint64_t local_mem_size = 0;  // the kernel always reports 0 here
  // The GPU's memory bank (mem_banks/0 of a GPU node): VRAM, all CPU-visible (large BAR).
  uint64_t vram_bytes = 0;
  uint32_t vram_width = 0;        // bits
  uint32_t vram_clk_max_mhz = 0;

  // The host CPU nodes that precede the GPUs in topology.
  uint32_t cpu_nodes = 1;
  uint32_t cpu_cores_per_node = 0;
  uint32_t cpu_max_engine_clk_ccompute = 0;  // MHz, reported by every node
  // System memory of each CPU node (its mem_banks/0): the host's when the CPU nodes are the host's.
  uint64_t cpu_mem_per_node = 0;

  // Hardware queue-slot geometry used by hqds/mqds/rls.
  uint32_t pipes_per_mec = 4;
  uint32_t queues_per_pipe = 8;
  uint32_t first_kfd_queue = 2;           // queues 0..1 of every pipe belong to amdgpu itself
  uint32_t hqd_reg_base = 0;              // byte address of CP_MQD_BASE_ADDR in the hqds dump
  std::vector<uint32_t> xcc_reg_offsets;  // per XCC: added to every register byte address
  std::vector<uint32_t> sdma_reg_bases;   // per SDMA engine: byte address of RLC0_RB_CNTL
  uint32_t sdma_rlc_stride = 0x160;       // bytes between RLC register blocks of an engine
  uint32_t mqd_stride_per_xcc = 0x1000;   // bytes between the per-XCC copies of an MQD
  uint32_t first_mqd_addr = 0x006ed000;   // GPU address of the first MQD the driver allocates
  uint32_t first_vmid = 8;                // first VMID the HWS hands to KFD processes
  // docs/kfd-interface.md#create-and-destroy-queue: 127 under HWS, 255 on GFX 9.4.3.
  uint32_t per_process_queue_cap = 127;

  // GPUs of the machine (a machine has 1..N identical GPUs).
  std::vector<GpuInstance> gpus;

  uint32_t simd_count() const { return cu_count * simd_per_cu; }
  uint32_t cu_per_simd_array() const { return array_count ? cu_count / array_count : 0; }
};

// Builds the named profile with `num_gpus` GPUs (0 = the machine the captures came from: 8 for
// MI308X, 4 for MI300X, 1 for MI210; at most 8, 8, 4). Throws std::invalid_argument naming the
// valid profiles, or the maximum when too many GPUs are asked for.
DeviceProfile make_profile(std::string_view name, uint32_t num_gpus = 1);

// The names make_profile accepts, in documentation order.
std::vector<std::string> profile_names();

}  // namespace gpreempt::sim
