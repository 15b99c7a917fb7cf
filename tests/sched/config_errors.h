// The errors lib/sched's load_config reports for a config given as text, one "file:line: what"
// per line ("" when it loads): what a user reads, so tests compare it whole.
#pragma once

#include <string>

#include "sched/config.h"

namespace gpreempt::sched::testing {

inline std::string config_errors(const std::string& text, const std::string& path) {
  auto r = load_config(text, path);
  std::string s;
  for (const auto& e : r.errors) s += e.to_string() + "\n";
  return s;
}

}  // namespace gpreempt::sched::testing
