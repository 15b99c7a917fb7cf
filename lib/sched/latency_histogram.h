// A fixed-size latency histogram for a long-running scheduler: bounded memory however many
// requests it sees. Buckets grow by 2^(1/8) (≈ 9 %) from 1 µs, so a percentile is reported as
// its bucket's upper bound, at most 9 % above the true value. Above ~ 2^26 µs (67 s) all land in
// the last bucket.
#pragma once

#include <array>
#include <cstdint>

#include "sched/time.h"

namespace gpreempt::sched {

class LatencyHistogram {
 public:
  static constexpr int kPerDoubling = 8;
  static constexpr int kBuckets = 26 * kPerDoubling + 1;

  void add(Duration d);
  uint64_t count() const { return count_; }
  Duration total() const { return total_; }
  Duration max() const { return max_; }
  // q in [0, 1]; zero when empty.
  Duration percentile(double q) const;

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  Duration total_{0};
  Duration max_{0};
};

}  // namespace gpreempt::sched
