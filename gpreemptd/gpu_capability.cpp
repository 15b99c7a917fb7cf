#include "gpu_capability.h"

#include "common/error.h"
#include "discovery/topology.h"
#include "kfd/dbg_trap.h"
#include "kfd/driver.h"
#include "kfd/version.h"

namespace gpreemptd {

MachineFacts probe_machine(const std::string& device, const std::string& topology_root) {
  MachineFacts m;
  std::string machine_reason;
  try {
    auto driver = gpreempt::kfd::open_linux_driver(device);
    gpreempt::kfd::Version v;
    long r = gpreempt::kfd::get_version_retry(*driver, v);
    if (r < 0) throw gpreempt::Error(static_cast<int>(-r), "GET_VERSION failed");
    m.kfd_version = gpreempt::kfd::to_string(v);
    if (!gpreempt::kfd::version_supported(v)) {
      machine_reason = "KFD ioctl interface " + *m.kfd_version +
                       " has no debug-trap SUSPEND_QUEUES (it needs >= 1.13 and < 2.0)";
    } else if (gpreempt::kfd::probe_hws(*driver) == false) {
      machine_reason =
          "the GPUs are not scheduled by the hardware scheduler (amdgpu.sched_policy=2): "
          "the KFD refuses every debug-trap call";
    }
    m.kfd_usable = gpreempt::kfd::version_supported(v);
    if (!m.kfd_usable) m.problem = machine_reason;
  } catch (const std::exception& e) {
    machine_reason = std::string("the KFD device cannot be used: ") + e.what();
    m.problem = machine_reason;
  }
  try {
    for (const auto& n : gpreempt::discovery::read_gpu_nodes(topology_root)) {
      GpuFacts g;
      g.gpu = n.gpu_id;
      g.name = n.gfx_name();
      g.clock_mhz = n.max_engine_clk_fcompute;
      g.reason = machine_reason;
      if (g.reason.empty() && !n.debug_trap_supported())
        g.reason = "the GPU's topology node does not report trap-debug support";
      g.can_suspend = g.reason.empty();
      m.gpus.push_back(std::move(g));
    }
  } catch (const std::exception& e) {
    if (m.problem.empty()) m.problem = std::string("cannot read the KFD topology: ") + e.what();
  }
  return m;
}

}  // namespace gpreemptd
