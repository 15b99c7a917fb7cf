// SUSPEND/RESUME as the HWS lives them: whole-device unmap, grace period, CWSR save of every
// wave in flight (online queues too), remap with restore, and progress kept across it.
#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace gpreempt::sim::gpu {
namespace {

using testing::capture;
using testing::full_wave;
using testing::kernel;
using testing::quiet;
using testing::Recorder;
using testing::RunlistResult;

constexpr QueueKey kOnline{2, 0};
constexpr QueueKey kOffline{1, 0};
constexpr SimTime kOfflineWg = 1'000'000;
constexpr SimTime kOnlineWg = 5'000'000;

struct TwoQueues : ::testing::Test {
  GpuProfile p = mi308x_profile();
  GpuEngine e{p, 1, quiet()};
  Recorder online, offline;
  void SetUp() override {
    e.add_queue(kOnline, 7, false);
    e.add_queue(kOffline, 7, false);
    e.submit_kernel(kOnline, kernel(8, kOnlineWg, "online"), online.cb());
    e.submit_kernel(kOffline, kernel(full_wave(p) * 4, kOfflineWg, "offline"), offline.cb());
  }
  uint32_t all_waves() const {
    uint32_t w = 0;
    for (uint32_t x = 0; x < p.num_xcc; ++x) w += e.busy_waves(x);
    return w;
  }
};

TEST_F(TwoQueues, SuspendUnmapsTheWholeDeviceAndSavesEveryWaveInFlight) {
  const SimTime t0 = 500'000;
  e.advance_to(t0);
  const uint32_t waves = all_waves();
  ASSERT_EQ(waves, p.cus_per_xcc * p.max_waves_per_cu * p.num_xcc);  // the device is full
  RunlistResult r;
  e.execute_runlist(0, {kOnline}, capture(r, e));
  e.run_until_idle(t0 + 5'000'000);
  ASSERT_TRUE(r.result);
  EXPECT_EQ(*r.result, 0);
  ASSERT_EQ(e.records().size(), 1u);
  const RunlistRecord& rec = e.records().front();
  EXPECT_EQ(rec.kind, RunlistKind::kSuspend);
  EXPECT_EQ(rec.requested_ns, t0);
  // Grace 0 is written into CP_IQ_WAIT_TIME2 by one more HIQ packet before the unmap.
  EXPECT_EQ(rec.unmap_started_ns, t0 + p.unmap_latency_ns + p.grace_packet_ns);
  // Grace 0 means one unit of 1,000 clocks; the waves then all go through CWSR, online ones too,
  // each with the state its registers take (the fixture's kernels: the generic footprint).
  const auto occ = occupancy(p, kernel(1, 1));
  ASSERT_TRUE(occ);
  const uint64_t bytes = waves * occ->wave_bytes;
  EXPECT_EQ(rec.waves_saved, waves);
  EXPECT_EQ(rec.bytes_saved, bytes);
  EXPECT_EQ(rec.save_ns, p.save_ns(bytes));
  EXPECT_EQ(rec.stopped_ns, t0 + p.unmap_latency_ns + p.grace_packet_ns + p.grace_ns(0) + p.save_ns(bytes));
  // Only the online queue is mapped again, after the packet that resets the grace; its 8
  // workgroups (32 waves) are restored.
  EXPECT_EQ(rec.waves_restored, 32u);
  EXPECT_EQ(rec.bytes_restored, 32 * occ->wave_bytes);
  EXPECT_EQ(rec.restore_ns, p.restore_ns(32 * occ->wave_bytes));
  EXPECT_EQ(rec.resumed_ns, rec.stopped_ns + p.grace_packet_ns + p.map_latency_ns + rec.restore_ns);
  // The ioctl returns once the wave-state information has been copied to user memory.
  EXPECT_EQ(r.at, rec.resumed_ns + p.suspend_copy_ns);
  EXPECT_EQ(rec.queues_mapped, 1u);
  EXPECT_EQ(rec.queues_suspended, 1u);
  const auto off = e.queue_state(kOffline);
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->mapped);
  EXPECT_EQ(off->waves_running, 0u);
  EXPECT_EQ(off->waves_saved, waves - 32);
}

TEST_F(TwoQueues, OnlineQueuePaysTheRoundTripOfEverySuspend) {
  const SimTime t0 = 500'000;
  e.advance_to(t0);
  RunlistResult r;
  e.execute_runlist(0, {kOnline}, capture(r, e));
  e.run_until_idle(100'000'000);
  ASSERT_EQ(online.done.size(), 1u);
  const RunlistRecord& rec = e.records().front();
  const SimTime frozen_at = t0 + p.unmap_latency_ns + p.grace_packet_ns + p.grace_ns(0);
  // Its waves stopped at the freeze and ran again at the remap: exactly that much later.
  EXPECT_EQ(online.done[0].finished,
            p.packet_overhead_ns + kOnlineWg + (rec.resumed_ns - frozen_at));
}

TEST(Runlist, SuspendedQueueKeepsItsProgressAndGetsNoComputeUnits) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1, quiet());
  Recorder offline;
  e.add_queue(kOffline, 7, false);
  e.submit_kernel(kOffline, kernel(full_wave(p) * 4, kOfflineWg, "offline"), offline.cb());
  const SimTime t0 = 500'000;
  e.advance_to(t0);
  RunlistResult s;
  e.execute_runlist(0, {}, capture(s, e));
  e.advance_to(2'000'000);
  const auto before = e.queue_state(kOffline);
  e.advance_to(10'000'000);  // the device is idle, but the suspended queue waits
  const auto after = e.queue_state(kOffline);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(s.result, 0);
  EXPECT_EQ(before->workgroups_done, after->workgroups_done);
  EXPECT_EQ(after->waves_running, 0u);
  EXPECT_EQ(after->waves_saved, full_wave(p) * 4u);
  EXPECT_TRUE(offline.done.empty());

  RunlistResult r;
  e.execute_runlist(0, {kOffline}, capture(r, e));
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(r.result, 0);
  ASSERT_EQ(e.records().size(), 2u);
  const RunlistRecord& res = e.records().back();
  EXPECT_EQ(res.kind, RunlistKind::kResume);
  EXPECT_EQ(res.waves_saved, 0u);  // nothing was running
  EXPECT_EQ(res.waves_restored, after->waves_saved);
  ASSERT_EQ(offline.done.size(), 1u);
  // The saved workgroups had run from launch until the freeze; they need only the rest, then
  // the three remaining rounds. Nothing is redone.
  const SimTime ran = t0 + p.unmap_latency_ns + p.grace_packet_ns + p.grace_ns(0) - p.packet_overhead_ns;
  EXPECT_EQ(offline.done[0].finished, res.resumed_ns + (kOfflineWg - ran) + 3 * kOfflineWg);
  EXPECT_EQ(e.counters().workgroups_completed, full_wave(p) * 4ull);
}

TEST_F(TwoQueues, LongGraceLetsWavesDrainInsteadOfBeingSaved) {
  e.advance_to(500'000);
  RunlistResult r;
  e.execute_runlist(0x100000, {kOnline, kOffline}, capture(r, e));  // ~738 ms of grace
  e.run_until_idle(1'000'000'000);
  const RunlistRecord& rec = e.records().front();
  EXPECT_EQ(rec.kind, RunlistKind::kUpdate);
  EXPECT_EQ(rec.waves_saved, 0u);
  // No new workgroups launch after the unmap, so the device drains when the online waves end.
  EXPECT_EQ(rec.stopped_ns, p.packet_overhead_ns + kOnlineWg);
}

TEST_F(TwoQueues, RunlistUpdatesAreSerialised) {
  e.advance_to(500'000);
  RunlistResult a, b;
  e.execute_runlist(0, {kOnline}, capture(a, e));
  e.execute_runlist(0, {kOnline, kOffline}, capture(b, e));
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(e.records().size(), 2u);
  // Both were asked for at once; the second starts only when the first is done, i.e. after the
  // SUSPEND's wave-state copy.
  EXPECT_EQ(e.records()[1].requested_ns, 500'000);
  EXPECT_EQ(a.at, e.records()[0].resumed_ns + p.suspend_copy_ns);
  EXPECT_EQ(e.records()[1].unmap_started_ns, a.at + p.unmap_latency_ns + p.grace_packet_ns);
  EXPECT_EQ(b.at, e.records()[1].resumed_ns);
  EXPECT_EQ(offline.done.size(), 1u);
}

TEST(Runlist, QueueCreationRemapsTheWholeRunlistWhenEnabled) {
  const auto p = mi308x_profile();
  GpuEngine e(p, 1);  // default options: create/destroy refresh the runlist, as KFD does
  e.add_queue({1, 0}, 7, false);
  EXPECT_FALSE(e.queue_state({1, 0})->mapped);  // only after the refresh
  e.run_until_idle(1'000'000'000);
  EXPECT_TRUE(e.queue_state({1, 0})->mapped);
  ASSERT_EQ(e.records().size(), 1u);
  EXPECT_EQ(e.records()[0].kind, RunlistKind::kCreate);
  EXPECT_EQ(e.records()[0].resumed_ns, p.unmap_latency_ns + p.map_latency_ns);
  e.remove_queue({1, 0});
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(e.records().size(), 2u);
  EXPECT_EQ(e.records()[1].kind, RunlistKind::kDestroy);
}

TEST(Runlist, QueueCreatedSuspendedStaysUnmapped) {
  GpuEngine e(mi308x_profile(), 1);
  e.add_queue({1, 0}, 7, true);
  e.run_until_idle(1'000'000'000);
  EXPECT_FALSE(e.queue_state({1, 0})->mapped);
  EXPECT_FALSE(e.queue_state({1, 0})->runnable);
}

}  // namespace
}  // namespace gpreempt::sim::gpu
