#include "common/latency_summary.h"

#include <algorithm>
#include <cmath>

namespace gpreempt {

static double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
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
  s.p50 = percentile(v, 50);
  s.p95 = percentile(v, 95);
  s.p99 = percentile(v, 99);
  return s;
}

nlohmann::json to_json(const LatencySummary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"std", s.std}, {"min", s.min},
          {"p50", s.p50},     {"p95", s.p95},   {"p99", s.p99}, {"max", s.max}};
}

}  // namespace gpreempt
