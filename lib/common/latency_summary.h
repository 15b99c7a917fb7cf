// Summary statistics of a latency sample (pure): the one definition of mean/std/percentiles that
// the workloads, the demo and the benchmarks report, so their figures are comparable.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt {

struct LatencySummary {
  uint64_t count = 0;
  double mean = 0, std = 0, min = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};

// Percentiles interpolate linearly between order statistics (numpy's default); std is the
// population standard deviation. All zero for an empty input.
LatencySummary summarize(std::vector<double> values);
// The q-th percentile (0..100) of `values` by the same definition; NaN for an empty sample (the
// evaluation's rows show it as null: no request, no latency).
double percentile(std::vector<double> values, double q);
// Every figure rounded to `decimals` places (json_conventions::round_to): 3 for the _ms and _us
// documents of the project. The unit is in the name of the key that holds the summary.
nlohmann::json to_json(const LatencySummary& s, int decimals = 3);

}  // namespace gpreempt
