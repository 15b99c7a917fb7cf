#include "sched/objective.h"

#include <cstdio>

namespace gpreempt::sched {

const char* to_string(Metric m) {
  switch (m) {
    case Metric::kLatency:
      return "latency";
    case Metric::kTtft:
      return "ttft";
    case Metric::kTpot:
      return "tpot";
  }
  return "?";
}

std::string Goal::describe() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%sp%g <= %g ms",
                metric == Metric::kTtft   ? "TTFT "
                : metric == Metric::kTpot ? "TPOT "
                                          : "",
                percentile, std::chrono::duration<double, std::milli>(target).count());
  return buf;
}

std::vector<Goal> Objective::goals() const {
  std::vector<Goal> out;
  if (target > Duration::zero()) out.push_back({Metric::kLatency, percentile, target});
  if (ttft) out.push_back(*ttft);
  if (tpot) out.push_back(*tpot);
  return out;
}

std::string Objective::describe() const {
  std::string s;
  for (const Goal& g : goals()) s += (s.empty() ? "" : ", ") + g.describe();
  char buf[48];
  std::snprintf(buf, sizeof buf, " over %g s", std::chrono::duration<double>(window).count());
  return s + buf;
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

std::optional<std::pair<Metric, double>> goal_of_key(const std::string& key) {
  static const std::pair<const char*, Metric> kPrefixes[] = {{"ttft_", Metric::kTtft},
                                                             {"tpot_", Metric::kTpot}};
  for (const auto& [prefix, metric] : kPrefixes) {
    const std::string pre(prefix);
    if (key.rfind(pre, 0) == 0) {
      auto p = percentile_of_key(key.substr(pre.size()));
      if (!p) return std::nullopt;
      return std::pair{metric, *p};
    }
  }
  if (auto p = percentile_of_key(key)) return std::pair{Metric::kLatency, *p};
  return std::nullopt;
}

}  // namespace gpreempt::sched
