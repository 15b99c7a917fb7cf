// "none": both sides share the GPU as the hardware schedules them, nothing done. The interference
// every other baseline is measured against.
#include "eval/des/policy.h"

namespace gpreempt::eval::des {

std::unique_ptr<Policy> make_no_control(const Spec&, PolicyHost&) {
  return std::make_unique<Policy>();
}

}  // namespace gpreempt::eval::des
