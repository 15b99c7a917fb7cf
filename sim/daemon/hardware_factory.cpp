// The one place that decides which GPU model drives a simulated machine (--hardware /
// KFDSIM_HARDWARE): "instant" completes every runlist change at once; "gpu" is the timing model of
// sim/gpu (CU sharing, HWS slots, CWSR costs, the AQL command processor).
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "common/error.h"
#include "sim/daemon/hardware.h"
#include "sim/device/device_profile.h"
#ifdef GPREEMPT_HAVE_GPU_MODEL
#include "sim/gpu/gpu_hardware.h"
#endif

namespace gpreempt::sim::daemon {
namespace {

// Every runlist change completes at once; doorbells and time are ignored.
class InstantHardware final : public Hardware {
 public:
  std::shared_ptr<Hws> hws() override { return hws_; }
  bool ticks_change_state() const override { return false; }

 private:
  std::shared_ptr<Hws> hws_ = std::make_shared<InstantHws>();
};

}  // namespace

std::unique_ptr<Hardware> make_hardware(const DeviceProfile& profile,
                                        const HardwareOptions& options) {
  if (options.model.empty() || options.model == "instant") return std::make_unique<InstantHardware>();
#ifdef GPREEMPT_HAVE_GPU_MODEL
  if (options.model == "gpu") {
    // The model reads its GPREEMPT_SIM_* settings from the environment; the machine directory is
    // the daemon's own (a daemon started for `kfdsim run` has no KFDSIM_DIR in its environment).
    std::string dir = options.machine_dir;
    return gpu::make_gpu_hardware(profile, [dir](const char* name) -> const char* {
      if (!dir.empty() && std::string_view(name) == "KFDSIM_DIR") return dir.c_str();
      return std::getenv(name);
    });
  }
  throw gpreempt::Error(EINVAL, "unknown hardware model '" + options.model + "' (known: instant, gpu)");
#else
  (void)profile;
  throw gpreempt::Error(EINVAL, "unknown hardware model '" + options.model +
                              "' (known: instant; this build has no sim/gpu model)");
#endif
}

}  // namespace gpreempt::sim::daemon
