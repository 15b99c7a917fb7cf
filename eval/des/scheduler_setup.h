// How the DES sets up lib/sched for the gpreempt baselines (policies/gpreempt.cpp): two classes
// (online, priority 10, with the trigger the baseline tests; offline, priority 0) and the arbiter's knobs from the
// spec's policy, every unset knob keeping ArbiterConfig's default (the only place defaults live).
// Tests build the same Scheduler to replay the DES's events.
#pragma once

#include <vector>

#include "eval/des/spec.h"
#include "sched/arbiter_config.h"
#include "sched/event.h"
#include "sched/sched_class.h"

namespace gpreempt::eval::des {

sched::ArbiterConfig arbiter_config(const PolicyDef& p);
// The online class carries the spec's objective (policy.slo), if any.
std::vector<sched::SchedClass> scheduler_classes(sched::RequestSource trigger, const PolicyDef& p);

}  // namespace gpreempt::eval::des
