// "throttle": XSched's Lv1 on AMD — the offline host holds back its launches while online work is
// pending on the GPU, with at most `throttle.max_in_flight` of its launches in flight; what it
// already launched runs on.
#include "eval/des/policy.h"

namespace gpreempt::eval::des {
namespace {

class LaunchThrottle final : public Policy {
 public:
  LaunchThrottle(const Spec& spec, PolicyHost& host)
      : host_(host), max_in_flight_(spec.throttle_max_in_flight), pending_(spec.gpus, false) {}

  uint32_t max_in_flight(uint32_t) const override { return max_in_flight_; }
  bool may_launch(uint32_t gpu) const override { return !pending_[gpu]; }
  void online_pending(uint32_t gpu, bool pending) override {
    pending_[gpu] = pending;
    if (!pending) host_.pump_offline(gpu);
  }

 private:
  PolicyHost& host_;
  uint32_t max_in_flight_;
  std::vector<bool> pending_;  // per GPU
};

}  // namespace

std::unique_ptr<Policy> make_throttle(const Spec& spec, PolicyHost& host) {
  return std::make_unique<LaunchThrottle>(spec, host);
}

}  // namespace gpreempt::eval::des
