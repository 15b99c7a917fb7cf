// The single place where KFD ioctls are issued through a driver and their errno values become
// messages.
//
// Every ioctl is retried on EINTR (as ROCdbgapi does), here and nowhere else: drivers never retry
// (kfd/driver.h). The kernel copies the arguments back even when a call fails, and SUSPEND/RESUME
// have already marked every entry of their queue-id array with bit 31 (and bit 30 on scheduler
// failures) by then (docs/kfd-interface.md#suspend-queues), so a retry starts again from the
// caller's original arguments and array. The errno → message mapping follows the kernel's check
// order (docs/kfd-interface.md#errno-by-operation): the same errno means different things for
// different ops, and the message says which one applies and what to do.
#pragma once

#include <cstdint>
#include <span>

#include "common/error.h"
#include "kfd/driver.h"

namespace gpreempt::kfd {

// Issue one DBG_TRAP, retrying while it fails with EINTR; before each retry `args` and the
// SUSPEND/RESUME queue-id array it points to are put back as they were. Returns >= 0 or -errno.
long dbg_trap_retry(KfdDriver& driver, kfd_ioctl_dbg_trap_args& args);

// The queue-id array a SUSPEND_QUEUES / RESUME_QUEUES call names (empty for other ops and for a
// NULL array), for the EINTR restore and the trace.
std::span<uint32_t> queue_id_array(const kfd_ioctl_dbg_trap_args& args);

// GET_VERSION, retried on EINTR like every other call. Returns 0 or -errno.
long get_version_retry(KfdDriver& driver, Version& out);

// The Error for a failed DBG_TRAP `op` on target `pid` (err > 0).
Error dbg_trap_error(uint32_t op, uint32_t pid, int err);

// dbg_trap_retry, throwing dbg_trap_error on failure. Returns the (non-negative) value.
long dbg_trap_checked(KfdDriver& driver, kfd_ioctl_dbg_trap_args& args);

}  // namespace gpreempt::kfd
