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

}  // namespace

std::map<std::string, std::string> drm_sysfs_files(const DeviceProfile& profile) {
  std::map<std::string, std::string> out;
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
