// The evaluation's baselines by name: a new one is a file in eval/des/policies/ and its line here
// (its factory declared beside its entry).
#include <functional>
#include <stdexcept>
#include <utility>

#include "eval/des/policy.h"

namespace gpreempt::eval::des {

std::unique_ptr<Policy> make_no_control(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_priority(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_throttle(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_partition(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_gpreempt_hint(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_gpreempt_early(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_gpreempt_transparent(const Spec&, PolicyHost&);
std::unique_ptr<Policy> make_oracle(const Spec&, PolicyHost&);

namespace {

using Factory = std::unique_ptr<Policy> (*)(const Spec&, PolicyHost&);

const std::vector<std::pair<const char*, Factory>>& registry() {
  static const std::vector<std::pair<const char*, Factory>> r = {
      {"none", make_no_control},
      {"priority", make_priority},
      {"throttle", make_throttle},
      {"partition", make_partition},
      {"gpreempt-hint", make_gpreempt_hint},
      {"gpreempt-early", make_gpreempt_early},
      {"gpreempt-transparent", make_gpreempt_transparent},
      {"oracle", make_oracle},
  };
  return r;
}

}  // namespace

std::unique_ptr<Policy> make_policy(const Spec& spec, PolicyHost& host) {
  for (const auto& [name, make] : registry())
    if (spec.baseline == name) return make(spec, host);
  throw std::invalid_argument("unknown baseline \"" + spec.baseline + "\"");
}

std::vector<std::string> baseline_names() {
  std::vector<std::string> v;
  for (const auto& [name, make] : registry()) v.emplace_back(name);
  return v;
}

}  // namespace gpreempt::eval::des
