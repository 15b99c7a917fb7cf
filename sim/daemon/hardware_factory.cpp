// The one place that decides which GPU model drives a simulated machine. The GPU timing model
// (sim/gpu) plugs in here as another Hardware implementation selected by HardwareOptions::model.
#include <cstdlib>
#include <stdexcept>

#include "sim/daemon/hardware.h"
#include "sim/device/device_profile.h"
#include "sim/gpu/gpu_hardware.h"  // "gpu": the GPU timing model + AQL command processor (sim/gpu)

namespace gpreempt::sim::daemon {
namespace {

// Every runlist change completes at once; doorbells and time are ignored.
class InstantHardware final : public Hardware {
 public:
  std::shared_ptr<Hws> hws() override { return hws_; }

 private:
  std::shared_ptr<Hws> hws_ = std::make_shared<InstantHws>();
};

}  // namespace

std::unique_ptr<Hardware> make_hardware(const DeviceProfile& profile,
                                        const HardwareOptions& options) {
  if (options.model.empty() || options.model == "instant") return std::make_unique<InstantHardware>();
  // sim/gpu owns this branch: configured by the GPREEMPT_SIM_* variables (sim/gpu/model_config.h).
  if (options.model == "gpu")
    return gpu::make_gpu_hardware(profile, [](const char* k) { return std::getenv(k); });
  throw std::invalid_argument("unknown hardware model '" + options.model + "' (known: instant, gpu)");
}

}  // namespace gpreempt::sim::daemon
