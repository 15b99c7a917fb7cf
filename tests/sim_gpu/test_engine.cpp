// Kernel execution: duration from shape and cost, in-order queues, CU sharing, priorities and
// hardware queue slots.
#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace gpreempt::sim::gpu {
namespace {

using testing::capture;
using testing::full_wave;
using testing::kernel;
using testing::quiet;
using testing::Recorder;

constexpr SimTime kWg = 100'000;

TEST(Engine, KernelTakesPacketOverheadPlusOneWorkgroupTimePerRound) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  const QueueKey q{10, 0};
  e.add_queue(q, 7, false);
  Recorder r;
  e.submit_kernel(q, kernel(full_wave(p), kWg), r.cb());          // one round
  e.submit_kernel(q, kernel(full_wave(p) * 2 + 1, kWg), r.cb());  // three rounds
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(r.done.size(), 2u);
  EXPECT_EQ(r.done[0].finished - r.done[0].queued, p.packet_overhead_ns + kWg);
  EXPECT_EQ(r.done[1].finished - r.done[1].started, p.packet_overhead_ns + 3 * kWg);
  EXPECT_EQ(e.counters().kernels_completed, 2u);
  EXPECT_EQ(e.counters().workgroups_completed, full_wave(p) * 3ull + 1);
}

TEST(Engine, KernelsOfOneQueueRunInOrder) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  const QueueKey q{10, 0};
  e.add_queue(q, 7, false);
  Recorder r;
  for (int i = 0; i < 5; ++i) e.submit_kernel(q, kernel(8, kWg), r.cb());
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(r.done.size(), 5u);
  for (std::size_t i = 1; i < r.done.size(); ++i) {
    // A tiny kernel fits easily, so without ordering all five would run together.
    EXPECT_GE(r.done[i].started, r.done[i - 1].finished);
  }
}

TEST(Engine, SmallKernelsOfDifferentQueuesRunConcurrently) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  Recorder r;
  for (uint32_t i = 0; i < 4; ++i) e.add_queue({10, i}, 7, false);
  for (uint32_t i = 0; i < 4; ++i) e.submit_kernel({10, i}, kernel(8, kWg), r.cb());
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(r.done.size(), 4u);
  for (const auto& d : r.done) EXPECT_EQ(d.finished, p.packet_overhead_ns + kWg);
}

TEST(Engine, FullDeviceKernelsShareComputeUnits) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  e.add_queue({1, 0}, 7, false);
  e.add_queue({2, 0}, 7, false);
  Recorder a, b;
  const uint32_t wgs = full_wave(p) * 4;  // four rounds alone
  e.submit_kernel({1, 0}, kernel(wgs, kWg), a.cb());
  e.submit_kernel({2, 0}, kernel(wgs, kWg), b.cb());
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(a.done.size(), 1u);
  ASSERT_EQ(b.done.size(), 1u);
  const SimTime alone = p.packet_overhead_ns + 4 * kWg;
  // A launched first and filled the device for one round; from then on each gets half of every
  // XCC, so both take longer than alone and the device still does exactly eight rounds of work.
  EXPECT_EQ(a.done[0].finished, p.packet_overhead_ns + 7 * kWg);
  EXPECT_EQ(b.done[0].finished, p.packet_overhead_ns + 8 * kWg);
  EXPECT_GT(a.done[0].finished, alone);
  for (uint32_t x = 0; x < p.num_xcc; ++x) EXPECT_EQ(e.busy_waves(x), 0u);
}

TEST(Engine, HigherPriorityQueueTakesFreedSlotsFirst) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  e.add_queue({1, 0}, 2, false);   // pipe priority LOW
  e.add_queue({2, 0}, 14, false);  // pipe priority HIGH
  Recorder lo, hi;
  const uint32_t wgs = full_wave(p) * 4;
  e.submit_kernel({1, 0}, kernel(wgs, kWg), lo.cb());
  e.submit_kernel({2, 0}, kernel(wgs, kWg), hi.cb());
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(hi.done.size(), 1u);
  ASSERT_EQ(lo.done.size(), 1u);
  // The low-priority kernel launched first and holds the device for one round; after that every
  // freed slot goes to the high-priority queue until it is done (equal priorities would share).
  EXPECT_EQ(hi.done[0].finished, p.packet_overhead_ns + 5 * kWg);
  EXPECT_EQ(lo.done[0].finished, p.packet_overhead_ns + 8 * kWg);
}

TEST(Engine, NewKernelWaitsForSlotsHeldByARunningKernel) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  e.add_queue({1, 0}, 7, false);
  e.add_queue({2, 0}, 7, false);
  Recorder big, small;
  e.submit_kernel({1, 0}, kernel(full_wave(p), 1'000'000), big.cb());  // holds every slot 1 ms
  e.advance_to(100'000);
  e.submit_kernel({2, 0}, kernel(4, 10'000), small.cb());
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(small.done.size(), 1u);
  // Interference: the small kernel starts only when the big one's workgroups leave.
  EXPECT_EQ(small.done[0].finished, p.packet_overhead_ns + 1'000'000 + 10'000);
}

TEST(Engine, OversubscribedQueuesAreTimeSlicedWithTheQuantum) {
  auto p = mi308x_profile();
  p.compute_pipes = 1;
  p.queues_per_pipe = 2;  // two hardware slots
  GpuEngine e(p, 1, quiet());
  Recorder r;
  for (uint32_t i = 0; i < 3; ++i) e.add_queue({1, i}, 7, false);
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(e.queue_state({1, i}));
    EXPECT_EQ(e.queue_state({1, i})->mapped, i < 2) << "queue " << i;
  }
  for (uint32_t i = 0; i < 3; ++i) e.submit_kernel({1, i}, kernel(8, 3'000'000), r.cb());
  e.advance_to(500'000);
  // Within the first quantum only the mapped queues made progress.
  EXPECT_GT(e.queue_state({1, 0})->waves_running, 0u);
  EXPECT_EQ(e.queue_state({1, 2})->waves_running, 0u);
  e.run_until_idle(1'000'000'000);
  EXPECT_EQ(r.done.size(), 3u);
  EXPECT_GT(e.counters().quantum_rotations, 0u);
  EXPECT_GT(e.counters().waves_saved, 0u);  // swapped-out queues were context-saved
}

TEST(Engine, WorkgroupsDealtToXccsRoundRobin) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  e.add_queue({1, 0}, 7, false);
  Recorder r;
  e.submit_kernel({1, 0}, kernel(2, kWg), r.cb());  // two workgroups: XCC 0 and 1
  e.advance_to(p.packet_overhead_ns + 1);
  EXPECT_EQ(e.busy_waves(0), 4u);
  EXPECT_EQ(e.busy_waves(1), 4u);
  EXPECT_EQ(e.busy_waves(2), 0u);
  EXPECT_EQ(e.busy_waves(3), 0u);
}

TEST(Engine, RemovedQueueReleasesItsComputeUnits) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  e.add_queue({1, 0}, 7, false);
  Recorder r;
  e.submit_kernel({1, 0}, kernel(full_wave(p), kWg), r.cb());
  e.advance_to(p.packet_overhead_ns + 1);
  EXPECT_GT(e.busy_waves(0), 0u);
  e.remove_queue({1, 0});
  EXPECT_EQ(e.busy_waves(0), 0u);
  e.run_until_idle(1'000'000'000);
  EXPECT_TRUE(r.done.empty());
}

}  // namespace
}  // namespace gpreempt::sim::gpu
