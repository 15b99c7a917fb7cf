#include "sched/classifier.h"

namespace gpreempt::sched {

Classifier::Classifier(std::vector<ClassRule> classes) : classes_(std::move(classes)) {}

std::vector<SchedClass> Classifier::classes() const {
  std::vector<SchedClass> v;
  for (const auto& c : classes_) v.push_back(c.cls);
  return v;
}

std::optional<Classification> Classifier::own(const ProcessFacts& p) const {
  const ClassRule* found = nullptr;
  const MatchRule* rule = nullptr;
  for (int pass = 0; pass < 2 && !found; ++pass) {  // pass 0: rules naming a pid
    for (const auto& c : classes_) {
      for (const auto& m : c.match) {
        if ((pass == 0) != m.pid.has_value() || !m.matches(p)) continue;
        found = &c;
        rule = &m;
        break;
      }
      if (found) break;
    }
  }
  if (!found) return std::nullopt;
  return Classification{found->cls.name, found->cls.priority, rule->describe(), std::nullopt};
}

std::optional<Classification> Classifier::classify(
    const ProcessFacts& process, const std::vector<ProcessFacts>& ancestors) const {
  if (auto c = own(process)) return c;
  for (const auto& a : ancestors) {
    if (auto c = own(a)) {
      c->inherited_from = a.key;
      return c;
    }
  }
  return std::nullopt;
}

}  // namespace gpreempt::sched
