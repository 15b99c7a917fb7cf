// Whether the KFD runs its queues through the hardware scheduler (HWS), asked the way the kernel
// decides it: every DBG_TRAP starts with `sched_policy == NO_HWS → -EINVAL`, before it looks up
// the pid (FACTS §7). `gpreempt info` and gpreemptd's GPU capability check share this one probe.
#pragma once

#include <optional>

#include "kfd/driver.h"

namespace gpreempt::kfd {

// Pid 0 is never a process, so with HWS the call fails -ESRCH and touches nothing. true: HWS,
// false: no HWS (debug-trap suspend impossible), nullopt when the answer is neither.
std::optional<bool> probe_hws(KfdDriver& driver);

}  // namespace gpreempt::kfd
