// The sysfs side of the simulated GPUs' DRM render nodes, as libdrm looks at it: drmNodeIsDRM()
// requires /sys/dev/char/226:<minor>/device/drm, and the PCI identity sits in device/.
// Also /sys/class/drm/{card<i>,renderD<minor>} (links to the PCI device's drm/ entries, with the
// amdgpu device files rocm-smi reads: identity, VBIOS, unique id, VRAM size), the amdgpu module's /proc/modules line and /sys/module/amdgpu/ (lsmod, rocminfo's check).
// Keyed like KfdDevice::render_files() (paths relative to the machine root; '/' = directory).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sim/device/device_profile.h"

namespace gpreempt::sim::daemon {

// `vram_used`: bytes in use per gpu_id (KfdDevice::vram_used), shown as mem_info_vram_used.
std::map<std::string, std::string> drm_sysfs_files(const DeviceProfile& profile,
                                                   const std::map<uint32_t, uint64_t>& vram_used);
// Where the PCI device directories are (a lookup under /sys/class/drm re-renders this subtree).
inline constexpr const char* kDrmPciRoot = "sys/devices/pci0000:00";

}  // namespace gpreempt::sim::daemon
