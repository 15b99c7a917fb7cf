// The GPU model as kfdsimd's Hardware (sim/daemon/hardware.h): wall-clock driving of GpuModel,
// the write-pointer poll of the command processor, and its records (live through the daemon's
// socket, `kfdsim stats`; in a file when the daemon stops).
#pragma once

#include <functional>
#include <memory>

#include "sim/daemon/hardware.h"
#include "sim/device/device_profile.h"

namespace gpreempt::sim::gpu {

// Configured from the GPREEMPT_SIM_* variables (sim/gpu/model_config.h) on top of the machine's
// device profile (CU count, XCCs, clock and HQD slots come from it, so topology and timing
// agree). The records are written to GPREEMPT_SIM_STATS, default <KFDSIM_DIR>/gpu-stats.json,
// when the daemon stops.
// Throws std::invalid_argument naming the variable when the configuration is malformed.
std::unique_ptr<daemon::Hardware> make_gpu_hardware(
    const DeviceProfile& profile, const std::function<const char*(const char*)>& getenv);

}  // namespace gpreempt::sim::gpu
