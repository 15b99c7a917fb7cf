#include "metrics/metrics_snapshot.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpreemptd {

Histogram Histogram::with_bounds(std::vector<double> bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]))
      throw std::invalid_argument("histogram bound " + std::to_string(i) + " is not finite");
    if (i > 0 && !(bounds[i - 1] < bounds[i]))
      throw std::invalid_argument("histogram bounds must be strictly ascending (bound " +
                                  std::to_string(i) + ")");
  }
  Histogram h;
  h.bucket_counts.assign(bounds.size() + 1, 0);
  h.upper_bounds = std::move(bounds);
  return h;
}

// Bounds chosen around what the targets talk about: a SUSPEND costs ~0.3–0.5 ms on the
// simulated MI308X and a preemption timeout is seconds; online requests are ~1 ms to seconds.
Histogram Histogram::suspend_latency() {
  return with_bounds({0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                      0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1});
}

Histogram Histogram::request_latency() {
  return with_bounds({0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                      0.5, 1, 2.5, 5, 10});
}

void Histogram::observe(double seconds) {
  if (bucket_counts.size() != upper_bounds.size() + 1) bucket_counts.resize(upper_bounds.size() + 1, 0);
  // Bucket i holds values <= upper_bounds[i] (Prometheus' `le`): the first bound not below it.
  const auto it = std::lower_bound(upper_bounds.begin(), upper_bounds.end(), seconds);
  ++bucket_counts[static_cast<std::size_t>(it - upper_bounds.begin())];
  sum += seconds;
}

std::uint64_t Histogram::count() const {
  std::uint64_t n = 0;
  for (auto c : bucket_counts) n += c;
  return n;
}

}  // namespace gpreemptd
