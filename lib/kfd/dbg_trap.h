// The single place where DBG_TRAP calls are issued and their errno values become messages.
//
// Every ioctl is retried on EINTR (as ROCdbgapi does). The errno → message mapping follows the
// kernel's check order (FACTS §7-§8): the same errno means different things for different ops,
// and the message says which one applies and what to do.
#pragma once

#include <cstdint>

#include "common/error.h"
#include "kfd/driver.h"

namespace gpreempt::kfd {

// Issue one DBG_TRAP, retrying while it fails with EINTR. Returns >= 0 or -errno.
long dbg_trap_retry(KfdDriver& driver, kfd_ioctl_dbg_trap_args& args);

// The Error for a failed DBG_TRAP `op` on target `pid` (err > 0).
Error dbg_trap_error(uint32_t op, uint32_t pid, int err);

// dbg_trap_retry, throwing dbg_trap_error on failure. Returns the (non-negative) value.
long dbg_trap_checked(KfdDriver& driver, kfd_ioctl_dbg_trap_args& args);

}  // namespace gpreempt::kfd
