// The KFD version gate: the debugger API (RUNTIME_ENABLE, DBG_TRAP) exists from ioctl 1.13, and a
// major version other than 1 is a different ABI. Same window as ROCdbgapi: [1.13, 2.0).
#pragma once

#include <optional>
#include <string>

#include "kfd/driver.h"

namespace gpreempt::kfd {

bool version_supported(const Version& v);
// "1.22"
std::string to_string(const Version& v);
// GET_VERSION, then throws Error(EPROTO, "... found 1.12, gpreempt needs >= 1.13 and < 2.0 ...")
// outside the window. Returns the version found.
Version check_version(KfdDriver& driver);

// Whether the KFD runs its queues through the hardware scheduler, asked the way the kernel decides
// it: every DBG_TRAP starts with `sched_policy == NO_HWS -> -EINVAL`, before it looks up the pid
// (docs/kfd-interface.md#debug-trap-prologue). Pid 0 is never a process, so with HWS the call fails
// -ESRCH and touches nothing. nullopt when the answer is neither. Only meaningful when
// version_supported().
std::optional<bool> probe_hws(KfdDriver& driver);

}  // namespace gpreempt::kfd
