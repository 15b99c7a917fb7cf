// The knobs of a simulated machine, shared by kfdsimd and kfdsim: defaults, then the KFDSIM_*
// environment (so a daemon started on demand by the shim gets the user's choice), then flags.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpreempt::sim::daemon {

struct MachineOptions {
  std::string profile = "mi308x";
  uint32_t gpus = 1;          // 0 = as many as the captured machine of that profile had
  uint32_t kfd_minor = 22;    // GET_VERSION minor (lower it to test version gates)
  int sched_policy = 0;       // amdgpu.sched_policy: 0 HWS, 1 HWS without oversubscription, 2 no HWS
  // CONFIG_HZ of the simulated kernel: the jiffies a timed WAIT_EVENTS sleeps and writes back
  // (sim/device/kernel_timer.h). Debian's is 250; 100 and 1000 are the other choices that divide
  // 1000 ms (300 does not, and is not simulated).
  uint32_t kernel_hz = 250;
  // "gpu" executes the AQL packets workloads submit (sim/gpu); "instant" only plays the KFD state
  // machine (runlist changes complete at once, packets never run) — cheaper for pure ioctl tests.
  std::string hardware = "gpu";
  // CPU nodes of the topology: "host" describes this host's NUMA nodes and CPUs (what libhsakmt and
  // ROCr cross-check), "profile" keeps the captured machine's (for comparing files with captures).
  std::string cpu_nodes = "host";
  // Every uid may use the machine, as every user may open a real node's /dev/kfd
  // (peer_access.h); otherwise it is its owner's alone.
  bool shared = false;
};

// KFDSIM_PROFILE, KFDSIM_GPUS, KFDSIM_KFD_MINOR, KFDSIM_SCHED_POLICY, KFDSIM_KERNEL_HZ,
// KFDSIM_HARDWARE, KFDSIM_CPU_NODES.
// Returns an error message naming the variable and the expected form, or "" (pure: getenv
// injected).
std::string apply_environment(MachineOptions& o, const std::function<const char*(const char*)>& getenv);

// The same options as command-line flags, e.g. for handing them to a daemon being started.
std::vector<std::string> to_flags(const MachineOptions& o);

// The CONFIG_HZ values a machine may have (kernel_hz), for the flags' checks too.
inline const std::vector<uint32_t> kKernelHzChoices{100, 250, 1000};
bool valid_kernel_hz(uint32_t hz);

}  // namespace gpreempt::sim::daemon
