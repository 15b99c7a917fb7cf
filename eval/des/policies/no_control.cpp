// "none": both sides share the GPU as the hardware schedules them. It is gpreemptd with
// `[policy] name = "none"`: the Runtime classifies both sides and is told of every request (begin
// and end hints), and acts on nothing. The interference every other baseline is measured against.
#include "eval/des/policy.h"

namespace gpreempt::eval::des {

namespace {

class NoControl : public Policy {
 public:
  std::optional<RuntimeUse> runtime_use() const override {
    return RuntimeUse{sched::PolicyName::kNone, sched::RequestSource::kHint, true, 0};
  }
};

}  // namespace

std::unique_ptr<Policy> make_no_control(const Spec&, PolicyHost&) {
  return std::make_unique<NoControl>();
}

}  // namespace gpreempt::eval::des
