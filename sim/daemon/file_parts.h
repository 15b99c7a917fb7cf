// Which parts of the machine's files a path lookup needs up to date, so that kfdsimd renders only
// those (KfdDevice::render_files(FilePart, pid)) instead of every file of the machine: a lookup
// then costs what the files it can see cost, whatever else runs on the machine.
//
// The topology and the DRM nodes' sysfs entries depend on the profile alone: rendered once at
// start and never here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/device/kfd_device.h"

namespace gpreempt::sim::daemon {

struct FilePartRef {
  FilePart part = FilePart::kProcesses;
  int pid = 0;          // kProcess only
  std::string subtree;  // host-relative path under root/ that the part's files fill, exactly
};

FilePartRef file_part(FilePart part, int pid = 0);

// Pure: the parts whose files a lookup of `guest_path` (an absolute guest path such as
// "/sys/class/kfd/kfd/proc/42/queues") can reach: the part holding it, or every part below it for
// a directory (a reader may walk it with *at calls the shim does not see). "" means every part.
std::vector<FilePartRef> parts_for_lookup(std::string_view guest_path);

}  // namespace gpreempt::sim::daemon
