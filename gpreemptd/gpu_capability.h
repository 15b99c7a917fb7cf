// What this machine allows on each GPU: whether debug-trap suspend works (KFD ioctl >= 1.13 and
// < 2.0, the hardware scheduler, the node's trap-debug capability) and, when not, why — sent to
// the scheduler as one GpuCapability event per GPU. Also each GPU's compute clock, the unit of
// the grace period.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/process_key.h"

namespace gpreemptd {

struct GpuFacts {
  gpreempt::sched::GpuId gpu = 0;
  std::string name;        // "gfx942"
  uint32_t clock_mhz = 0;  // max_engine_clk_fcompute
  bool can_suspend = false;
  std::string reason;  // why not; empty when it can
};

struct MachineFacts {
  std::optional<std::string> kfd_version;  // "1.16"; nullopt when the device cannot be opened
  bool kfd_usable = false;                 // a context can be opened (the version gate passes)
  std::string problem;                     // why not, when !kfd_usable
  std::vector<GpuFacts> gpus;
};

// Opens `device` once (GET_VERSION, the HWS probe) and reads the topology under `topology_root`.
// Never throws: problems end up as reasons.
MachineFacts probe_machine(const std::string& device, const std::string& topology_root);

}  // namespace gpreemptd
