// Which class a GPU process belongs to.
//
// A process's own match comes first: a class whose rule names its pid wins; otherwise the first
// class, in the order of the config file, with a matching rule. A process that matches nothing
// itself inherits the class of its nearest ancestor that does — so a class covers whole process
// trees (DataLoader workers, torchrun ranks, vLLM workers) — and a process with no matching
// ancestor either is left alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/match_rule.h"
#include "sched/process_facts.h"
#include "sched/sched_class.h"

namespace gpreempt::sched {

struct ClassRule {
  SchedClass cls;
  std::vector<MatchRule> match;  // any of them
};

struct Classification {
  std::string class_name;
  int priority = 0;
  std::string rule;                          // the rule that matched (MatchRule::describe)
  std::optional<ProcessKey> inherited_from;  // the ancestor whose rule matched
};

class Classifier {
 public:
  explicit Classifier(std::vector<ClassRule> classes);

  // `ancestors`: the parent chain, nearest first (the daemon stops at pid 1).
  std::optional<Classification> classify(const ProcessFacts& process,
                                         const std::vector<ProcessFacts>& ancestors) const;
  const std::vector<ClassRule>& rules() const { return classes_; }
  std::vector<SchedClass> classes() const;

 private:
  std::optional<Classification> own(const ProcessFacts& p) const;

  std::vector<ClassRule> classes_;
};

}  // namespace gpreempt::sched
