#include "sched/policy_name.h"

namespace gpreempt::sched {

const char* to_string(PolicyName p) {
  switch (p) {
    case PolicyName::kGpreempt: return "gpreempt";
    case PolicyName::kNone: return "none";
  }
  return "?";
}

std::optional<PolicyName> parse_policy_name(const std::string& name, std::string* why) {
  if (name == "gpreempt") return PolicyName::kGpreempt;
  if (name == "none") return PolicyName::kNone;
  std::string reason;
  if (name == "throttle")
    reason = "launch throttling holds back the process's own kernel launches, which a daemon "
             "cannot do from outside";
  else if (name == "partition")
    reason = "a static partition sets CU masks on the process's queues, which the KFD lets only "
             "the owning process do";
  else if (name == "priority")
    reason = "KFD queue priorities are set by the process's runtime when it creates its queues";
  else if (name == "oracle")
    reason = "the oracle is an instant, free actuator that exists only in the simulator";
  else if (name.rfind("gpreempt-", 0) == 0)
    reason = "the trigger is a class's setting here: write name = \"gpreempt\" and the class's "
             "trigger = \"" + name.substr(9) + "\"";
  if (why)
    *why = reason.empty()
               ? "unknown policy \"" + name + "\" (expected \"gpreempt\" or \"none\")"
               : "policy \"" + name + "\" runs only in the evaluation (gpreempt-des): " + reason +
                     " (expected \"gpreempt\" or \"none\")";
  return std::nullopt;
}

}  // namespace gpreempt::sched
