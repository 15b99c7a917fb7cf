// What discovery read of a GPU process and why it got its class: what the status document and
// the metrics show of it. The scheduler decides nothing with it; the DES leaves it empty.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/process_key.h"

namespace gpreempt::sched {

struct ProcessDescription {
  std::vector<std::string> cmdline;
  uint32_t uid = 0;  // real uid: whose hints count for it, whose status shows it
  std::string rule;  // the rule that gave its class (MatchRule::describe)
  // The ancestor whose rule gave the class (classes cover process trees); nullopt: its own rule.
  std::optional<ProcessKey> inherited_from;
  std::map<GpuId, int> queues;  // queues per GPU (sysfs)
  // false: its queues were not read yet and `queues` says nothing (discovery hands a new process
  // over classified before it reads its queues; the rest follows in the same pass).
  bool queues_read = true;
  // When its files were read: a report read before the one the registry holds is stale.
  std::chrono::steady_clock::time_point read_at{};

  // Whether `o` says the same of the process (when it was read aside).
  bool says_the_same(const ProcessDescription& o) const {
    return cmdline == o.cmdline && uid == o.uid && rule == o.rule &&
           inherited_from == o.inherited_from && queues == o.queues;
  }
};

}  // namespace gpreempt::sched
