// "priority": KFD queue priorities only — the online queues at the top (HIGH pipe), the offline
// ones at the bottom (LOW). The command processor prefers the online queue's next dispatch, but
// nothing already running is preempted.
#include "eval/des/policy.h"

namespace gpreempt::eval::des {
namespace {

class QueuePriority final : public Policy {
 public:
  uint32_t queue_priority(bool online) const override {
    return online ? kHighQueuePriority : kLowQueuePriority;
  }
};

}  // namespace

std::unique_ptr<Policy> make_priority(const Spec&, PolicyHost&) {
  return std::make_unique<QueuePriority>();
}

}  // namespace gpreempt::eval::des
