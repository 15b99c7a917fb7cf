// sysfs files of the simulated machine: KFD topology and the per-process queue directories
// (docs/kfd-interface.md#sysfs), both under /sys/class/kfd/kfd and /sys/devices/virtual/kfd/kfd
// (the class entry is a symlink to the device in the real tree, so both show the same content).
#include <gpreempt/kfd_abi.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "device_state.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;

namespace {

const char* const kRoots[] = {"sys/class/kfd/kfd/", "sys/devices/virtual/kfd/kfd/"};

void prop(std::string& s, const char* key, uint64_t v) {
  s += key;
  s += ' ';
  s += std::to_string(v);
  s += '\n';
}

// The kernel-internal queue type the sysfs `type` file prints (enum kfd_queue_type, newest).
uint32_t internal_queue_type(const detail::Queue& q) {
  switch (q.uapi_type) {
    case KFD_IOC_QUEUE_TYPE_SDMA:
      return KFD_QUEUE_TYPE_SDMA;
    case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
      return KFD_QUEUE_TYPE_SDMA_XGMI;
    case KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
      return 4;  // KFD_QUEUE_TYPE_SDMA_BY_ENG_ID
    default:
      return KFD_QUEUE_TYPE_COMPUTE;
  }
}

std::string cpu_properties(const DeviceProfile& p, uint32_t node) {
  std::string s;
  prop(s, "cpu_cores_count", p.cpu_cores_per_node);
  prop(s, "simd_count", 0);
  // Counts match the directories so a reader that walks them (hsakmt) finds what the counts
  // promise: one memory bank (system memory, which ROCr's system memory pools are made of), no
  // caches, links.
  prop(s, "mem_banks_count", 1);
  prop(s, "caches_count", 0);
  prop(s, "io_links_count", 0);
  prop(s, "p2p_links_count", 0);
  prop(s, "cpu_core_id_base", uint64_t{node} * p.cpu_cores_per_node);
  prop(s, "simd_id_base", 0);
  prop(s, "max_waves_per_simd", 0);
  prop(s, "lds_size_in_kb", 0);
  prop(s, "gds_size_in_kb", 0);
  prop(s, "num_gws", 0);
  prop(s, "wave_front_size", 0);
  prop(s, "array_count", 0);
  prop(s, "simd_arrays_per_engine", 0);
  prop(s, "cu_per_simd_array", 0);
  prop(s, "simd_per_cu", 0);
  prop(s, "max_slots_scratch_cu", 0);
  prop(s, "gfx_target_version", 0);
  prop(s, "vendor_id", 0);
  prop(s, "device_id", 0);
  prop(s, "location_id", 0);
  prop(s, "domain", 0);
  prop(s, "drm_render_minor", 0);
  prop(s, "hive_id", 0);
  prop(s, "num_sdma_engines", 0);
  prop(s, "num_sdma_xgmi_engines", 0);
  prop(s, "num_sdma_queues_per_engine", 0);
  prop(s, "num_cp_queues", 0);
  prop(s, "cwsr_size", 0);
  prop(s, "ctl_stack_size", 0);
  prop(s, "max_engine_clk_ccompute", p.cpu_max_engine_clk_ccompute);
  return s;
}

std::string gpu_properties(const DeviceProfile& p, const GpuInstance& g, uint32_t node) {
  std::string s;
  prop(s, "cpu_cores_count", 0);
  prop(s, "simd_count", p.simd_count());
  prop(s, "mem_banks_count", 1);  // the VRAM
  prop(s, "caches_count", p.gpu_caches.size());
  prop(s, "io_links_count", 0);
  prop(s, "p2p_links_count", 0);
  prop(s, "cpu_core_id_base", 0);
  // KFD_TOPOLOGY_GPU_SIMD_ID_BASE (0x80000000) + node << 12, as the kernel numbers GPU SIMDs.
  prop(s, "simd_id_base", 0x80000000ull + (uint64_t{node} << 12));
  prop(s, "max_waves_per_simd", p.max_waves_per_simd);
  prop(s, "lds_size_in_kb", p.lds_size_in_kb);
  prop(s, "gds_size_in_kb", p.gds_size_in_kb);
  prop(s, "num_gws", p.num_gws);
  prop(s, "wave_front_size", p.wave_front_size);
  prop(s, "array_count", p.array_count);
  prop(s, "simd_arrays_per_engine", p.simd_arrays_per_engine);
  prop(s, "cu_per_simd_array", p.cu_per_simd_array());
  prop(s, "simd_per_cu", p.simd_per_cu);
  prop(s, "max_slots_scratch_cu", p.max_slots_scratch_cu);
  prop(s, "gfx_target_version", p.gfx_target_version);
  prop(s, "vendor_id", p.vendor_id);
  prop(s, "device_id", p.device_id);
  prop(s, "location_id", g.location_id);
  prop(s, "domain", 0);
  prop(s, "drm_render_minor", g.drm_render_minor);
  prop(s, "hive_id", p.hive_id);
  prop(s, "num_sdma_engines", p.num_sdma_engines);
  prop(s, "num_sdma_xgmi_engines", p.num_sdma_xgmi_engines);
  prop(s, "num_sdma_queues_per_engine", p.num_sdma_queues_per_engine);
  prop(s, "num_cp_queues", p.num_cp_queues);
  prop(s, "cwsr_size", p.cwsr_size);
  prop(s, "ctl_stack_size", p.ctl_stack_size);
  prop(s, "max_engine_clk_fcompute", p.max_engine_clk_fcompute);
  prop(s, "local_mem_size", p.local_mem_size);
  prop(s, "fw_version", p.fw_version);
  prop(s, "capability", p.capability);
  prop(s, "capability2", p.capability2);
  prop(s, "debug_prop", p.debug_prop);
  prop(s, "sdma_fw_version", p.sdma_fw_version);
  prop(s, "unique_id", g.unique_id);
  prop(s, "num_xcc", p.num_xcc);
  prop(s, "max_engine_clk_ccompute", p.cpu_max_engine_clk_ccompute);
  return s;
}

const char* const kNodeSubdirs[] = {"mem_banks/", "caches/", "io_links/", "p2p_links/", "perf/"};

// mem_banks/<n>/properties as kfd_topology.c's mem_show prints it. heap_type: 0 system memory,
// 1 frame buffer the CPU can reach whole (a large BAR: what MI2xx/MI3xx have).
std::string mem_bank_properties(uint32_t heap_type, uint64_t size, uint32_t width, uint32_t clk) {
  std::string s;
  prop(s, "heap_type", heap_type);
  prop(s, "size_in_bytes", size);
  prop(s, "flags", 0);
  prop(s, "width", width);
  prop(s, "mem_clk_max", clk);
  return s;
}

// caches/<n>/properties as kfd_topology.c's kfd_cache_show prints it. One entry per kind of cache
// with all CUs as its siblings, where the kernel lists one per group of CUs sharing it.
std::string cache_properties(const GpuCache& c, uint32_t simd_id_base, uint32_t cus) {
  std::string s;
  prop(s, "processor_id_low", simd_id_base);
  prop(s, "level", c.level);
  prop(s, "size", c.size_kb);
  prop(s, "cache_line_size", c.line_size);
  prop(s, "cache_lines_per_tag", 1);
  prop(s, "association", 0);
  prop(s, "latency", 0);
  prop(s, "type", c.type);
  s += "sibling_map ";
  for (uint32_t i = 0; i < cus; ++i) s += i + 1 < cus ? "1," : "1\n";
  return s;
}

}  // namespace

void KfdDevice::State::render_topology(std::map<std::string, std::string>& out) const {
  std::map<std::string, std::string> t;
  // One generation per node the kernel added: the CPU topology counts once, then each GPU.
  t["topology/generation_id"] = std::to_string(1 + profile.gpus.size()) + "\n";
  t["topology/system_properties"] = "platform_oem 0\nplatform_id 0\nplatform_rev 0\n";
  uint32_t node = 0;
  auto add_node = [&](const std::string& gpu_id, const std::string& name, const std::string& props,
                      const std::string& bank) {
    const std::string dir = "topology/nodes/" + std::to_string(node) + "/";
    t[dir + "gpu_id"] = gpu_id + "\n";
    t[dir + "name"] = name + "\n";
    t[dir + "properties"] = props;
    for (const char* sub : kNodeSubdirs) t[dir + sub] = "";
    t[dir + "mem_banks/0/properties"] = bank;
    if (gpu_id != "0")
      for (std::size_t i = 0; i < profile.gpu_caches.size(); ++i)
        t[dir + "caches/" + std::to_string(i) + "/properties"] = cache_properties(
            profile.gpu_caches[i], 0x80000000u + (node << 12), profile.cu_count);
    ++node;
  };
  for (uint32_t c = 0; c < profile.cpu_nodes; ++c)
    add_node("0", "", cpu_properties(profile, c),
             mem_bank_properties(0, profile.cpu_mem_per_node, 0, 0));
  for (const auto& g : profile.gpus)
    add_node(std::to_string(g.gpu_id), profile.topology_name, gpu_properties(profile, g, node),
             mem_bank_properties(1, profile.vram_bytes, profile.vram_width,
                                 profile.vram_clk_max_mhz));
  for (const char* root : kRoots)
    for (const auto& [k, v] : t) out[root + k] = v;
}

void KfdDevice::State::render_one_proc(int pid, const detail::Process& p,
                                       std::map<std::string, std::string>& t) {
  const std::string dir = "proc/" + std::to_string(pid) + "/";
  t[dir + "pasid"] = "0\n";  // newest kernels: PASIDs are per device now
  if (p.queues.empty()) t[dir + "queues/"] = "";
  for (const auto& q : p.queues) {
    const std::string qd = dir + "queues/" + std::to_string(q.id) + "/";
    t[qd + "size"] = std::to_string(uint64_t{q.ring_size});  // no trailing newline
    t[qd + "type"] = std::to_string(internal_queue_type(q));
    t[qd + "gpuid"] = std::to_string(q.gpu_id);
  }
}

void KfdDevice::State::render_proc(std::map<std::string, std::string>& out) const {
  std::map<std::string, std::string> t;
  for (const auto& [pid, p] : processes) render_one_proc(pid, *p, t);
  if (processes.empty()) t["proc/"] = "";
  for (const char* root : kRoots)
    for (const auto& [k, v] : t) out[root + k] = v;
}

std::map<std::string, std::string> KfdDevice::State::render() const {
  std::map<std::string, std::string> out;
  render_topology(out);
  render_proc(out);
  out["sys/kernel/debug/kfd/mqds"] = render_mqds();
  out["sys/kernel/debug/kfd/hqds"] = render_hqds();
  out["sys/kernel/debug/kfd/rls"] = render_rls();
  return out;
}

std::map<std::string, std::string> KfdDevice::State::render_part(FilePart part, int pid) const {
  std::map<std::string, std::string> out;
  std::map<std::string, std::string> t;
  switch (part) {
    case FilePart::kTopology: {
      std::map<std::string, std::string> both;
      render_topology(both);
      for (auto& [k, v] : both)
        if (k.compare(0, std::strlen(kRoots[1]), kRoots[1]) == 0) out.emplace(k, std::move(v));
      return out;
    }
    case FilePart::kProcesses:
      for (const auto& [id, p] : processes) render_one_proc(id, *p, t);
      t["proc/"] = "";
      break;
    case FilePart::kProcess:
      if (auto it = processes.find(pid); it != processes.end()) render_one_proc(pid, *it->second, t);
      break;
    case FilePart::kMqds: out["sys/kernel/debug/kfd/mqds"] = render_mqds(); return out;
    case FilePart::kHqds: out["sys/kernel/debug/kfd/hqds"] = render_hqds(); return out;
    case FilePart::kRls: out["sys/kernel/debug/kfd/rls"] = render_rls(); return out;
  }
  for (auto& [k, v] : t) out.emplace(kRoots[1] + k, std::move(v));
  return out;
}

}  // namespace gpreempt::sim
