#include <cerrno>

#include "common/error.h"
#include "doctor/doctor.h"
#include "kfd/dbg_trap.h"
#include "kfd/version.h"

namespace gpreempt::doctor {

KfdProbe probe_kfd(const std::string& device) {
  KfdProbe p;
  p.device = device;
  std::unique_ptr<kfd::KfdDriver> driver;
  try {
    driver = kfd::open_linux_driver(device);
  } catch (const Error& e) {
    p.open_errno = e.code();
    return p;
  }
  p.opened = true;
  kfd::Version v;
  if (kfd::get_version_retry(*driver, v) < 0) return p;
  p.major = v.major;
  p.minor = v.minor;
  if (kfd::version_supported(v)) p.hws = kfd::probe_hws(*driver);
  return p;
}

}  // namespace gpreempt::doctor
