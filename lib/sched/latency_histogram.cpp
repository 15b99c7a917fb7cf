#include "sched/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace gpreempt::sched {

namespace {
// Upper bound of bucket i in nanoseconds: bucket 0 holds everything up to 1 µs.
double upper_ns(int i) {
  return 1000.0 * std::exp2(static_cast<double>(i) / LatencyHistogram::kPerDoubling);
}
}  // namespace

void LatencyHistogram::add(Duration d) {
  if (d < Duration::zero()) d = Duration::zero();
  double ns = static_cast<double>(d.count());
  int i = ns <= 1000.0 ? 0 : static_cast<int>(std::ceil(std::log2(ns / 1000.0) * kPerDoubling));
  buckets_[static_cast<std::size_t>(std::clamp(i, 0, kBuckets - 1))]++;
  ++count_;
  total_ += d;
  max_ = std::max(max_, d);
}

Duration LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return Duration::zero();
  uint64_t rank =
      static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[static_cast<std::size_t>(i)];
    if (seen >= rank) {
      auto bound = Duration(static_cast<int64_t>(upper_ns(i)));
      return std::min(bound, max_);  // the last bucket is open-ended; never report above the max
    }
  }
  return max_;
}

}  // namespace gpreempt::sched
