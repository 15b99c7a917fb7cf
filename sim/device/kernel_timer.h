// How a WAIT_EVENTS timeout meets the kernel's clock: jiffies, msecs_to_jiffies and the timer
// wheel (docs/kfd-interface.md#events). The simulated device keeps no clock; the transport asks
// these when a wait goes to sleep and when a signal ends it. Jiffies tick at each multiple of
// 1/hz s of the transport's monotonic clock; `hz` must divide 1000 (250 on Debian, 1000, 100).
#pragma once

#include <cstdint>

namespace gpreempt::sim {

// user_timeout_to_jiffies: msecs_to_jiffies(ms) + 1 for a finite timeout (clamped to 2^31-1 ms,
// which the kernel then still treats as finite).
uint64_t wait_timeout_jiffies(uint32_t timeout_ms, uint32_t hz);

// When a WAIT_EVENTS that went to sleep at `slept_since_ns` with `timeout_ms` times out:
// schedule_timeout arms a timer at jiffies + wait_timeout_jiffies, and the timer wheel fires it
// at the first bucket boundary after that (calc_index: one jiffy late at level 0, rounded up to
// 8, 64, ... jiffies at the outer levels), so that it never fires early.
uint64_t wait_timeout_fires_at_ns(uint32_t timeout_ms, uint32_t hz, uint64_t slept_since_ns);

// What kfd_wait_on_events writes back into `timeout` when a signal ends its sleep at `now_ns`:
// schedule_timeout leaves the jiffies not slept, and it writes back jiffies_to_msecs(left - 1).
// The jiffies slept are the ticks between the two times, not their difference rounded.
uint32_t wait_timeout_left_ms(uint32_t timeout_ms, uint32_t hz, uint64_t slept_since_ns,
                              uint64_t now_ns);

}  // namespace gpreempt::sim
