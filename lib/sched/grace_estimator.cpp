#include "sched/grace_estimator.h"

#include <algorithm>
#include <vector>

namespace gpreempt::sched {

void GraceEstimator::observe(Duration kernel_length) {
  if (kernel_length < Duration::zero()) return;
  ring_[next_] = kernel_length;
  next_ = (next_ + 1) % kSamples;
  if (count_ < kSamples) ++count_;
}

Duration GraceEstimator::grace(const ArbiterConfig& config) const {
  if (count_ == 0) return config.grace_default;
  std::vector<Duration> v(ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(count_));
  // Nearest-rank 90th percentile: the smallest sample with at least 90 % of samples <= it.
  std::size_t rank = (count_ * 9 + 9) / 10;  // ceil(0.9 * n)
  auto nth = v.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(v.begin(), nth, v.end());
  Duration p90 = *nth;
  if (p90 <= config.grace_drain_limit) return std::max(config.grace_min, p90 * 5 / 4);
  return config.grace_min;
}

}  // namespace gpreempt::sched
