#include "sim/daemon/drm_files.h"

#include <cstdio>

namespace gpreempt::sim::daemon {
namespace {

std::string hex4(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x\n", v);
  return buf;
}

std::string hex2(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x\n", v);
  return buf;
}

// PCI address of a GPU as sysfs names it: domain 0, bus/device/function from the topology
// location_id (bus << 8 | device << 3 | function).
std::string pci_name(uint32_t location_id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:%02x:%02x.%x", (location_id >> 8) & 0xff,
                (location_id >> 3) & 0x1f, location_id & 0x7);
  return buf;
}

// The amdgpu PCI device directory as rocm-smi reads it, and its DRM class entries: card<i> and
// renderD<minor> are links into <device>/drm/, whose "device" links back to the PCI device.
void pci_device_files(const DeviceProfile& profile, const GpuInstance& g, uint32_t card,
                      uint64_t vram_used, std::map<std::string, std::string>& out) {
  const std::string pci = pci_name(g.location_id);
  const std::string dev = "sys/devices/pci0000:00/" + pci + "/";
  out[dev + "vendor"] = hex4(profile.vendor_id);
  out[dev + "device"] = hex4(profile.device_id);
  out[dev + "subsystem_vendor"] = hex4(profile.subsystem_vendor_id);
  out[dev + "subsystem_device"] = hex4(profile.subsystem_device_id);
  out[dev + "revision"] = hex2(profile.revision_id);
  // amdgpu reads these from the board's VBIOS and FRU; a simulated board names itself.
  out[dev + "vbios_version"] = "kfdsim-" + profile.name + "\n";
  out[dev + "product_name"] = profile.marketing_name + "\n";
  char id[32];
  std::snprintf(id, sizeof id, "%016llx\n", static_cast<unsigned long long>(g.unique_id));
  out[dev + "unique_id"] = id;
  out[dev + "mem_info_vram_total"] = std::to_string(profile.vram_bytes) + "\n";
  out[dev + "mem_info_vram_used"] = std::to_string(vram_used) + "\n";
  out[dev + "power_dpm_force_performance_level"] = "auto\n";  // the driver's default
  // amdgpu always registers a hwmon device (rocm-smi asserts on a GPU without one, and its 5.2
  // library needs the GFX voltage rail's label); the simulated GPU has no sensors, so there are
  // no readings and rocm-smi shows them N/A.
  const std::string hwmon = dev + "hwmon/hwmon" + std::to_string(card) + "/";
  out[hwmon + "name"] = "amdgpu\n";
  out[hwmon + "in0_label"] = "vddgfx\n";
  const std::string cardname = "card" + std::to_string(card);
  const std::string render = "renderD" + std::to_string(g.drm_render_minor);
  for (const std::string& node : {cardname, render}) {
    out[dev + "drm/" + node + "/device@"] = "../../../" + pci;
    out["sys/class/drm/" + node + "@"] = "../../devices/pci0000:00/" + pci + "/drm/" + node;
  }
}

}  // namespace

std::map<std::string, std::string> drm_sysfs_files(const DeviceProfile& profile,
                                                   const std::map<uint32_t, uint64_t>& vram_used) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < profile.gpus.size(); ++i) {
    auto used = vram_used.find(profile.gpus[i].gpu_id);
    pci_device_files(profile, profile.gpus[i], static_cast<uint32_t>(i),
                     used == vram_used.end() ? 0 : used->second, out);
  }
  for (const auto& g : profile.gpus) {
    std::string minor = std::to_string(g.drm_render_minor);
    std::string dev = "sys/dev/char/226:" + minor + "/device/";
    out[dev + "drm/renderD" + minor + "/"] = "";
    // PCI config identity in the kernel's sysfs format ("0x%04x\n", revision "0x%02x\n").
    out[dev + "vendor"] = hex4(profile.vendor_id);
    out[dev + "device"] = hex4(profile.device_id);
    out[dev + "subsystem_vendor"] = hex4(profile.subsystem_vendor_id);
    out[dev + "subsystem_device"] = hex4(profile.subsystem_device_id);
    out[dev + "revision"] = hex2(profile.revision_id);
  }
  if (!profile.gpus.empty()) {
    // The driver module, as kernel/module/procfs.c prints it to a reader without CAP_SYSLOG
    // (name, core size, users, "-" for no dependants, state, the address hidden as 0).
    constexpr char kSize[] = "14868480";
    out["proc/modules"] = std::string("amdgpu ") + kSize + " 0 - Live 0x0000000000000000\n";
    out["sys/module/amdgpu/initstate"] = "live\n";
    out["sys/module/amdgpu/refcnt"] = "0\n";
    out["sys/module/amdgpu/coresize"] = std::string(kSize) + "\n";
    out["sys/module/amdgpu/holders/"] = "";
  }
  return out;
}

}  // namespace gpreempt::sim::daemon
