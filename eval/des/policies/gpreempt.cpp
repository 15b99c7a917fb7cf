// gpreempt's rule: lib/sched's Runtime (the Scheduler gpreemptd runs) with the DES's actuator,
// which suspends and resumes the offline queues through the GPU model's runlist updates. Three
// baselines differ only in how the online class's requests reach it:
//   "gpreempt-hint"         the online clients send begin/end per request (RequestStarted/Finished);
//   "gpreempt-early"        also RequestExpected `policy.early_hint_us` before each arrival;
//   "gpreempt-transparent"  no hints: the shipped ActivityDetector reads the online queues'
//                           read/write pointers every `policy.poll_interval_us`.
#include <cmath>

#include "eval/des/policy.h"

namespace gpreempt::eval::des {
namespace {

class Gpreempt final : public Policy {
 public:
  explicit Gpreempt(RuntimeUse use) : use_(use) {}
  std::optional<RuntimeUse> runtime_use() const override { return use_; }

 private:
  RuntimeUse use_;
};

}  // namespace

std::unique_ptr<Policy> make_gpreempt_hint(const Spec&, PolicyHost&) {
  return std::make_unique<Gpreempt>(Policy::RuntimeUse{sched::PolicyName::kGpreempt, sched::RequestSource::kHint, true, 0});
}

std::unique_ptr<Policy> make_gpreempt_early(const Spec& spec, PolicyHost&) {
  const auto lead = static_cast<sim::gpu::SimTime>(std::llround(spec.policy.early_hint_us * 1e3));
  return std::make_unique<Gpreempt>(Policy::RuntimeUse{sched::PolicyName::kGpreempt, sched::RequestSource::kHint, true, lead});
}

std::unique_ptr<Policy> make_gpreempt_transparent(const Spec&, PolicyHost&) {
  return std::make_unique<Gpreempt>(
      Policy::RuntimeUse{sched::PolicyName::kGpreempt, sched::RequestSource::kTransparent, false, 0});
}

}  // namespace gpreempt::eval::des
