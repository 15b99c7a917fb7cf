// "partition": a static split of each GPU's compute units through CU masks — the online queues
// get the first `partition.online_cu_fraction` of them, the offline ones the rest, whether the
// online side is busy or not.
#include <algorithm>
#include <cmath>

#include "eval/des/policy.h"

namespace gpreempt::eval::des {
namespace {

class CuPartition final : public Policy {
 public:
  CuPartition(const Spec& spec, PolicyHost& host) : host_(host), gpus_(spec.gpus) {
    const auto& profile = host.model();
    cus_ = profile.cus_per_xcc;
    online_cus_ = static_cast<uint32_t>(std::llround(spec.partition_online_cu_fraction * cus_));
    online_cus_ = std::clamp<uint32_t>(online_cus_, 1, cus_ - 1);
    max_waves_per_cu_ = profile.max_waves_per_cu;
  }

  void queue_created(sim::gpu::GpuEngine& e, sim::gpu::QueueKey q, bool online) override {
    if (online)
      e.set_cu_mask(q, 0, online_cus_);
    else
      e.set_cu_mask(q, online_cus_, cus_ - online_cus_);
  }
  void finish(sim::gpu::SimTime, RunResult& res, std::vector<SuspendedWindow>&) override {
    const uint32_t offline_cus = cus_ - online_cus_;
    res.partition_offline_capacity_waves = static_cast<uint64_t>(offline_cus) * max_waves_per_cu_;
    for (uint32_t g = 0; g < gpus_; ++g)
      res.partition_offline_peak_waves = std::max(
          res.partition_offline_peak_waves, host_.engine(g).cu_mask_peak_waves(online_cus_, offline_cus));
  }

 private:
  PolicyHost& host_;
  uint32_t gpus_;
  uint32_t cus_ = 0;
  uint32_t online_cus_ = 0;
  uint32_t max_waves_per_cu_ = 0;
};

}  // namespace

std::unique_ptr<Policy> make_partition(const Spec& spec, PolicyHost& host) {
  return std::make_unique<CuPartition>(spec, host);
}

}  // namespace gpreempt::eval::des
