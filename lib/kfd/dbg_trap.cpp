#include "kfd/dbg_trap.h"

#include <algorithm>
#include <cerrno>
#include <span>
#include <string>
#include <vector>

namespace gpreempt::kfd {

namespace {

// The one EINTR loop: `call` until it is not interrupted, `restore` before every retry.
template <class Call, class Restore>
long retry_interrupted(Call&& call, Restore&& restore) {
  for (;;) {
    const long r = call();
    if (r != -EINTR) return r;
    restore();
  }
}

}  // namespace

std::span<uint32_t> queue_id_array(const kfd_ioctl_dbg_trap_args& a) {
  uint64_t ptr = 0;
  uint32_t n = 0;
  if (a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES) {
    ptr = a.suspend_queues.queue_array_ptr;
    n = a.suspend_queues.num_queues;
  } else if (a.op == KFD_IOC_DBG_TRAP_RESUME_QUEUES) {
    ptr = a.resume_queues.queue_array_ptr;
    n = a.resume_queues.num_queues;
  }
  if (ptr == 0) return {};
  return {reinterpret_cast<uint32_t*>(static_cast<uintptr_t>(ptr)), n};
}

long dbg_trap_retry(KfdDriver& driver, kfd_ioctl_dbg_trap_args& args) {
  const kfd_ioctl_dbg_trap_args original = args;
  const std::span<uint32_t> array = queue_id_array(args);
  const std::vector<uint32_t> original_ids(array.begin(), array.end());
  return retry_interrupted([&] { return driver.dbg_trap(args); },
                           [&] {
                             args = original;
                             std::copy(original_ids.begin(), original_ids.end(), array.begin());
                           });
}

long get_version_retry(KfdDriver& driver, Version& out) {
  return retry_interrupted([&] { return driver.get_version(out); }, [&] { out = Version{}; });
}

Error dbg_trap_error(uint32_t op, uint32_t pid, int err) {
  const std::string what = std::string("DBG_TRAP ") + dbg_trap_op_name(op) + " on pid " +
                           std::to_string(pid) + " failed: " + errno_text(err);
  const std::string p = std::to_string(pid);
  switch (err) {
    case ESRCH:
      return Error(err, what + " — process " + p +
                            " has exited or has never opened /dev/kfd (no KFD process)");
    case EPERM:
      if (op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES || op == KFD_IOC_DBG_TRAP_RESUME_QUEUES)
        return Error(err, what + " — either the calling thread is not the ptrace tracer of " + p +
                              "'s main thread, or the target's GPU runtime is not enabled yet "
                              "(no RUNTIME_ENABLE; it has no usable queues)");
      return Error(err, what + " — the calling thread is not the ptrace tracer of " + p +
                            "'s main thread (the kernel compares with the calling thread)");
    case EALREADY:
      return Error(err, what + " — another debugger (rocgdb, another gpreempt) already holds the "
                            "debug session of " + p);
    case EINVAL:
      if (op == KFD_IOC_DBG_TRAP_ENABLE)
        return Error(err, what + " — the KFD runs without the hardware scheduler (sched_policy=2)");
      return Error(err, what + " — no debug session is enabled on " + p +
                            " (it was disabled by another process, or the target restarted its "
                            "runtime), or the driver runs without HWS");
    case ENODEV:
      return Error(err, what + " — a GPU of " + p + " does not support debugging (pre-GFX9)");
    case EBADF:
      return Error(err, what + " — the event file descriptor is invalid, or /dev/kfd was opened "
                            "by another process (a forked child cannot reuse it)");
    case EOPNOTSUPP:
      return Error(err, what + " — secondary KFD contexts cannot be debugged");
    case EBUSY:
      return Error(err, what + " — the device is busy (GWS in use or PC sampling active)");
    case ENOTTY:
      return Error(err, what + " — this KFD has no DBG_TRAP ioctl (ioctl version < 1.13)");
    default:
      return Error(err, what);
  }
}

long dbg_trap_checked(KfdDriver& driver, kfd_ioctl_dbg_trap_args& args) {
  long r = dbg_trap_retry(driver, args);
  if (r < 0) throw dbg_trap_error(args.op, args.pid, static_cast<int>(-r));
  return r;
}

}  // namespace gpreempt::kfd
