#include "kernel_timer.h"

#include <algorithm>

namespace gpreempt::sim {

namespace {

uint64_t ns_per_jiffy(uint32_t hz) {
  return 1000000000ull / hz;
}

// kernel/time/timer.c: LVL_CLK_SHIFT 3 and LVL_BITS 6, so level n starts at a delta of
// 63 << 3(n-1) jiffies and its buckets are 8^n jiffies wide; LVL_DEPTH is 9 levels at HZ > 100,
// else 8.
constexpr unsigned kLevelShift = 3;

uint64_t level_start(unsigned level) {
  return 63ull << (kLevelShift * (level - 1));
}

// calc_wheel_index + calc_index: the jiffy at which the bucket holding a timer due at `expires`
// (armed at jiffy `clk`) is run. A delta beyond the last level (WHEEL_TIMEOUT_CUTOFF, ~12 days at
// HZ 1000, within a wait's 2^31-1 ms) is cut to the wheel's capacity, WHEEL_TIMEOUT_MAX.
uint64_t bucket_expiry(uint64_t expires, uint64_t clk, uint32_t hz) {
  const unsigned levels = hz > 100 ? 9 : 8;
  uint64_t delta = expires - clk;
  unsigned level = 0;
  if (delta >= level_start(levels)) {
    level = levels - 1;
    expires = clk + level_start(levels) - (1ull << (kLevelShift * level));
  } else {
    while (level + 1 < levels && delta >= level_start(level + 1)) ++level;
  }
  const unsigned shift = kLevelShift * level;
  return ((expires >> shift) + 1) << shift;
}

}  // namespace

uint64_t wait_timeout_jiffies(uint32_t timeout_ms, uint32_t hz) {
  const uint64_t ms_per_jiffy = 1000 / hz;
  const uint64_t ms = std::min(timeout_ms, 0x7fffffffu);
  return (ms + ms_per_jiffy - 1) / ms_per_jiffy + 1;
}

uint64_t wait_timeout_fires_at_ns(uint32_t timeout_ms, uint32_t hz, uint64_t slept_since_ns) {
  const uint64_t clk = slept_since_ns / ns_per_jiffy(hz);
  return bucket_expiry(clk + wait_timeout_jiffies(timeout_ms, hz), clk, hz) * ns_per_jiffy(hz);
}

uint32_t wait_timeout_left_ms(uint32_t timeout_ms, uint32_t hz, uint64_t slept_since_ns,
                              uint64_t now_ns) {
  const auto start = static_cast<int64_t>(wait_timeout_jiffies(timeout_ms, hz));
  const int64_t slept = static_cast<int64_t>(now_ns / ns_per_jiffy(hz)) -
                        static_cast<int64_t>(slept_since_ns / ns_per_jiffy(hz));
  const int64_t left = std::max<int64_t>(0, start - slept);
  return static_cast<uint32_t>(static_cast<uint64_t>(std::max<int64_t>(0, left - 1)) * (1000 / hz));
}

}  // namespace gpreempt::sim
