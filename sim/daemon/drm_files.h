// The sysfs side of the simulated GPUs' DRM render nodes, as libdrm looks at it: drmNodeIsDRM()
// requires /sys/dev/char/226:<minor>/device/drm, and the PCI identity sits in device/.
// Also the amdgpu module's /proc/modules line and /sys/module/amdgpu/ (lsmod, rocminfo's check).
// Keyed like KfdDevice::render_files() (paths relative to the machine root; '/' = directory).
#pragma once

#include <map>
#include <string>

#include "sim/device/device_profile.h"

namespace gpreempt::sim::daemon {

std::map<std::string, std::string> drm_sysfs_files(const DeviceProfile& profile);

}  // namespace gpreempt::sim::daemon
