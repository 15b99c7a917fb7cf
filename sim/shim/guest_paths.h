// Where a path the program names leads on the simulated machine: the KFD's sysfs/debugfs names and
// the simulated render nodes' sysfs into the directory kfdsimd materialises them in (refreshed
// first), /dev/kfd to the device node; every other path to itself.
#pragma once

#include <string>

#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::shim {

// Redirected path for a sysfs/debugfs name (after a refresh), /dev/kfd's placeholder file for
// the device node, or the path itself.
struct Resolved {
  protocol::GuestPathKind kind = protocol::GuestPathKind::kNone;
  std::string host;
  const char* c_str(const char* original) const {
    return kind == protocol::GuestPathKind::kNone ? original : host.c_str();
  }
};

// Asks kfdsimd to refresh what a lookup of `path` can reach, then says where it leads.
Resolved resolve(const char* path);

// The directory the machine's files are materialised in.
const std::string& files_root();

}  // namespace gpreempt::sim::shim
