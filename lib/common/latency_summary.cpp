#include "common/latency_summary.h"

#include <algorithm>
#include <cmath>

#include "common/json_conventions.h"

namespace gpreempt {

namespace {

double percentile_of_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  return percentile_of_sorted(values, q);
}

LatencySummary summarize(std::vector<double> v) {
  LatencySummary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / static_cast<double>(v.size()));
  s.min = v.front();
  s.max = v.back();
  s.p50 = percentile_of_sorted(v, 50);
  s.p95 = percentile_of_sorted(v, 95);
  s.p99 = percentile_of_sorted(v, 99);
  return s;
}

nlohmann::json to_json(const LatencySummary& s, int decimals) {
  auto r = [decimals](double v) { return json_conventions::round_to(v, decimals); };
  return {{"count", s.count}, {"mean", r(s.mean)}, {"std", r(s.std)}, {"min", r(s.min)},
          {"p50", r(s.p50)},  {"p95", r(s.p95)},   {"p99", r(s.p99)}, {"max", r(s.max)}};
}

}  // namespace gpreempt
