// The OS-driver seam (ROCdbgapi's os_driver_t idea): every KFD ioctl the library issues goes
// through this interface, so the debug-session logic can be unit-tested over a fake and every
// call can be traced with its inputs and outputs.
//
// Implementations return the ioctl's value: >= 0 on success (SUSPEND/RESUME return a count), or
// -errno. They never throw and never retry: EINTR handling and errno → message mapping live in
// one place above them (kfd/dbg_trap.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpreempt/kfd_abi.h"

namespace gpreempt::kfd {

struct Version {
  uint32_t major = 0;
  uint32_t minor = 0;
};

class KfdDriver {
 public:
  virtual ~KfdDriver() = default;
  // AMDKFD_IOC_GET_VERSION.
  virtual long get_version(Version& out) = 0;
  // AMDKFD_IOC_DBG_TRAP with `args` updated in place (the kernel copies args back even on failure).
  // The kernel checks that the *calling thread* is the target's ptrace parent
  // (docs/kfd-interface.md#ptrace-check).
  virtual long dbg_trap(kfd_ioctl_dbg_trap_args& args) = 0;
  // What this driver talks to, for messages ("/dev/kfd").
  virtual std::string describe() const = 0;
};

// Opens `path` (O_RDWR | O_CLOEXEC) once; the fd lives as long as the driver. Throws gpreempt::Error
// naming the path and the errno when it cannot be opened. Every call is traced (common/trace.h).
std::unique_ptr<KfdDriver> open_linux_driver(const std::string& path = "/dev/kfd");

// A driver that forwards to `inner` and emits one trace record per call.
std::unique_ptr<KfdDriver> make_tracing_driver(std::unique_ptr<KfdDriver> inner);

// Name of a DBG_TRAP op ("SUSPEND_QUEUES"), for traces and messages.
const char* dbg_trap_op_name(uint32_t op);

}  // namespace gpreempt::kfd
