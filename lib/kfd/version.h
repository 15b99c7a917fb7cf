// The KFD version gate: the debugger API (RUNTIME_ENABLE, DBG_TRAP) exists from ioctl 1.13, and a
// major version other than 1 is a different ABI. Same window as ROCdbgapi: [1.13, 2.0).
#pragma once

#include <string>

#include "kfd/driver.h"

namespace gpreempt::kfd {

bool version_supported(const Version& v);
// "1.22"
std::string to_string(const Version& v);
// GET_VERSION, then throws Error(EPROTO, "... found 1.12, gpreempt needs >= 1.13 and < 2.0 ...")
// outside the window. Returns the version found.
Version check_version(KfdDriver& driver);

}  // namespace gpreempt::kfd
