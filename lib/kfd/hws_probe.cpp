#include "kfd/hws_probe.h"

#include <cerrno>

namespace gpreempt::kfd {

std::optional<bool> probe_hws(KfdDriver& driver) {
  kfd_ioctl_dbg_trap_args a{};
  a.pid = 0;
  a.op = KFD_IOC_DBG_TRAP_DISABLE;
  const long r = driver.dbg_trap(a);
  if (r == -EINVAL) return false;
  if (r == -ESRCH) return true;
  return std::nullopt;
}

}  // namespace gpreempt::kfd
