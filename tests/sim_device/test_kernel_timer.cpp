// A WAIT_EVENTS timeout in the kernel's units: jiffies of CONFIG_HZ and the timer wheel's buckets
// (sim/device/kernel_timer.h). Times are on the transport's monotonic clock, in ns.
#include <gtest/gtest.h>

#include "kernel_timer.h"

namespace gpreempt::sim {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(KernelTimer, AWaitTimeoutIsItsMillisecondsInJiffiesRoundedUpPlusOne) {
  EXPECT_EQ(wait_timeout_jiffies(1, 250), 2u);  // msecs_to_jiffies(1) = 1 at 4 ms a jiffy
  EXPECT_EQ(wait_timeout_jiffies(4, 250), 2u);
  EXPECT_EQ(wait_timeout_jiffies(5, 250), 3u);
  EXPECT_EQ(wait_timeout_jiffies(1000, 250), 251u);
  EXPECT_EQ(wait_timeout_jiffies(7, 1000), 8u);
  EXPECT_EQ(wait_timeout_jiffies(0xfffffffeu, 1000), 0x7fffffffull + 1) << "clamped to 2^31-1 ms";
}

TEST(KernelTimer, AShortTimeoutFiresOneJiffyAfterItsExpiry) {
  // Asleep at 41 ms, jiffy 10 at HZ 250: 1 ms is 2 jiffies, due at jiffy 12; level 0 of the wheel
  // runs it at jiffy 13, 52 ms: 11 ms of sleep for a 1 ms timeout.
  EXPECT_EQ(wait_timeout_fires_at_ns(1, 250, 41 * kMs), 52 * kMs);
  // At the very start of jiffy 10 it sleeps 12 ms, just before the next tick 8 ms and a bit.
  EXPECT_EQ(wait_timeout_fires_at_ns(1, 250, 40 * kMs), 52 * kMs);
  EXPECT_EQ(wait_timeout_fires_at_ns(1, 250, 44 * kMs - 1), 52 * kMs);
  // HZ 1000: 5 ms is 6 jiffies, due at jiffy 106, run at 107.
  EXPECT_EQ(wait_timeout_fires_at_ns(5, 1000, 100 * kMs + 300000), 107 * kMs);
}

TEST(KernelTimer, ALongTimeoutFiresAtItsWheelLevelsGranularity) {
  // 1000 ms at HZ 250 from jiffy 10: 251 jiffies, due at 261, at level 1 (63 to 503 jiffies
  // ahead) whose buckets are 8 jiffies wide: run at jiffy 264.
  EXPECT_EQ(wait_timeout_fires_at_ns(1000, 250, 40 * kMs), 264 * 4 * kMs);
  // 62 jiffies ahead is still level 0, 63 is level 1.
  EXPECT_EQ(wait_timeout_fires_at_ns(244, 250, 0), 63 * 4 * kMs);  // 61 + 1 = 62, run at 63
  EXPECT_EQ(wait_timeout_fires_at_ns(248, 250, 0), 64 * 4 * kMs);  // 63: ((63 >> 3) + 1) << 3
  // 10 s at HZ 1000 from 0: 10001 jiffies, level 3 (4032 to 32255), 512 wide: jiffy 10240.
  EXPECT_EQ(wait_timeout_fires_at_ns(10000, 1000, 0), 10240 * kMs);
  // The longest finite wait, 2^31-1 ms at HZ 1000, is past the wheel's last level (9 at HZ > 100,
  // starting 63 << 24 jiffies ahead): cut to that capacity less one bucket of level 8 (2^24),
  // then rounded up to that bucket.
  const uint64_t cap = (63ull << 24) - (1ull << 24);
  EXPECT_EQ(wait_timeout_fires_at_ns(0x7fffffffu, 1000, 0), ((cap >> 24) + 1) * (1ull << 24) * kMs);
}

TEST(KernelTimer, AnInterruptedWaitWritesBackTheJiffiesLeftLessOne) {
  // 100 ms at HZ 250 is 26 jiffies; 3 ticks slept (from jiffy 10 to 13) leave 23, written back
  // as jiffies_to_msecs(22) = 88 ms.
  EXPECT_EQ(wait_timeout_left_ms(100, 250, 41 * kMs, 53 * kMs), 88u);
  // The ticks between the two times count, not the time: 0.5 ms across a tick is one jiffy.
  EXPECT_EQ(wait_timeout_left_ms(100, 250, 44 * kMs - 250000, 44 * kMs + 250000), 96u);
  EXPECT_EQ(wait_timeout_left_ms(100, 250, 41 * kMs, 43 * kMs), 100u);
  // Past its end: 0, never negative.
  EXPECT_EQ(wait_timeout_left_ms(4, 250, 0, 400 * kMs), 0u);
}

}  // namespace
}  // namespace gpreempt::sim
