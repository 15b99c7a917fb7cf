#include "sim/daemon/machine_options.h"

#include <algorithm>
#include <charconv>

namespace gpreempt::sim::daemon {
namespace {

template <typename T>
bool parse_number(const char* s, T& out) {
  std::string_view v(s);
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size() && !v.empty();
}

}  // namespace

std::string apply_environment(MachineOptions& o,
                              const std::function<const char*(const char*)>& getenv) {
  if (const char* v = getenv("KFDSIM_PROFILE"); v && *v) o.profile = v;
  if (const char* v = getenv("KFDSIM_HARDWARE"); v && *v) o.hardware = v;
  if (const char* v = getenv("KFDSIM_CPU_NODES"); v && *v) {
    o.cpu_nodes = v;
    if (o.cpu_nodes != "host" && o.cpu_nodes != "profile")
      return std::string("KFDSIM_CPU_NODES='") + v + "' is not 'host' or 'profile'";
  }
  if (const char* v = getenv("KFDSIM_GPUS"); v && *v) {
    if (!parse_number(v, o.gpus)) return std::string("KFDSIM_GPUS='") + v + "' is not a GPU count";
  }
  if (const char* v = getenv("KFDSIM_KFD_MINOR"); v && *v) {
    if (!parse_number(v, o.kfd_minor))
      return std::string("KFDSIM_KFD_MINOR='") + v + "' is not a KFD minor version (e.g. 22)";
  }
  if (const char* v = getenv("KFDSIM_SCHED_POLICY"); v && *v) {
    if (!parse_number(v, o.sched_policy) || o.sched_policy < 0 || o.sched_policy > 2)
      return std::string("KFDSIM_SCHED_POLICY='") + v + "' is not 0, 1 or 2";
  }
  if (const char* v = getenv("KFDSIM_KERNEL_HZ"); v && *v) {
    if (!parse_number(v, o.kernel_hz) || !valid_kernel_hz(o.kernel_hz))
      return std::string("KFDSIM_KERNEL_HZ='") + v +
             "' is not 100, 250 or 1000 (CONFIG_HZ; 300 is not simulated)";
  }
  return "";
}

bool valid_kernel_hz(uint32_t hz) {
  return std::find(kKernelHzChoices.begin(), kKernelHzChoices.end(), hz) != kKernelHzChoices.end();
}

std::vector<std::string> to_flags(const MachineOptions& o) {
  std::vector<std::string> flags{"--profile=" + o.profile,
                                 "--gpus=" + std::to_string(o.gpus),
                                 "--kfd-minor=" + std::to_string(o.kfd_minor),
                                 "--sched-policy=" + std::to_string(o.sched_policy),
                                 "--kernel-hz=" + std::to_string(o.kernel_hz),
                                 "--hardware=" + o.hardware,
                                 "--cpu-nodes=" + o.cpu_nodes};
  if (o.shared) flags.push_back("--shared");
  return flags;
}

}  // namespace gpreempt::sim::daemon
