#include "kfd/version.h"

#include <cerrno>

#include "common/error.h"
#include "kfd/dbg_trap.h"

namespace gpreempt::kfd {

bool version_supported(const Version& v) {
  return v.major == KFD_IOCTL_MAJOR_VERSION && v.minor >= KFD_DEBUGGER_API_MIN_MINOR;
}

std::string to_string(const Version& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

Version check_version(KfdDriver& driver) {
  Version v;
  long r = get_version_retry(driver, v);
  if (r < 0) {
    int e = static_cast<int>(-r);
    throw Error(e, "GET_VERSION on " + driver.describe() + " failed: " + errno_text(e));
  }
  if (!version_supported(v))
    throw Error(EPROTO, "KFD ioctl interface " + to_string(v) + " found on " + driver.describe() +
                            "; gpreempt needs >= 1." + std::to_string(KFD_DEBUGGER_API_MIN_MINOR) +
                            " and < 2.0 (the debugger API: RUNTIME_ENABLE and DBG_TRAP, Linux "
                            "6.5+ or a ROCm amdgpu-dkms driver)");
  return v;
}

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
