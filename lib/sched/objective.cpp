#include "sched/objective.h"

#include <cstdio>

namespace gpreempt::sched {

std::string Objective::describe() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "p%g <= %g ms over %g s", percentile,
                std::chrono::duration<double, std::milli>(target).count(),
                std::chrono::duration<double>(window).count());
  return buf;
}

const char* to_string(Protection p) {
  switch (p) {
    case Protection::kNone:
      return "none";
    case Protection::kLate:
      return "late";
    case Protection::kPerRequest:
      return "per_request";
    case Protection::kHold:
      return "hold";
  }
  return "?";
}

Protection stronger(Protection p) {
  return p == Protection::kHold ? p : static_cast<Protection>(static_cast<int>(p) + 1);
}

Protection weaker(Protection p) {
  return p == Protection::kNone ? p : static_cast<Protection>(static_cast<int>(p) - 1);
}

Duration late_after(const Objective& o) { return o.target / 2; }

std::optional<double> percentile_of_key(const std::string& key) {
  if (key == "p50_ms") return 50;
  if (key == "p90_ms") return 90;
  if (key == "p95_ms") return 95;
  if (key == "p99_ms") return 99;
  if (key == "p999_ms") return 99.9;
  return std::nullopt;
}

}  // namespace gpreempt::sched
