// Which policy a scheduler runs, by the name gpreemptd's `[policy] name` and the evaluation's
// baselines share (eval/des/policy_registry.cpp). Only two of the evaluation's baselines can run
// in a daemon that acts on other processes from outside: gpreempt's priority rule (suspend and
// resume through the debug-trap ioctls), and none (measure, never act). The others need what
// only the process itself, or the simulator, has: launch throttling holds back the process's
// own launches, a static partition sets its queues' CU masks (the KFD lets only the owner do
// that), KFD queue priorities are chosen by the owning runtime, and the oracle is a free,
// instant actuator no hardware has. Their names are refused with that reason.
#pragma once

#include <optional>
#include <string>

namespace gpreempt::sched {

enum class PolicyName {
  kGpreempt,  // the priority rule (priority_policy.h) with its time slices and objectives
  kNone,      // classify, count requests and their latency, report; never suspend for a request
              // or a time slice (operator holds still act: they are commands, not policy)
};

const char* to_string(PolicyName p);
// nullopt with `why` set (which names exist, or why a known name cannot run in gpreemptd).
std::optional<PolicyName> parse_policy_name(const std::string& name, std::string* why);

}  // namespace gpreempt::sched
