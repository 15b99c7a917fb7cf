// Injected faults of the simulated HWS, and their text form.
#include <cerrno>

#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace gpreempt::sim::gpu {
namespace {

using testing::capture;
using testing::full_wave;
using testing::kernel;
using testing::Recorder;
using testing::RunlistResult;

constexpr QueueKey kA{1, 0};
constexpr QueueKey kB{2, 0};
constexpr SimTime kTimeout = 50'000'000;  // the 9 s default, scaled down

struct Faulty : ::testing::Test {
  GpuProfile p = [] {
    auto p = mi308x_profile();
    p.preemption_timeout_ns = kTimeout;
    return p;
  }();
  std::unique_ptr<GpuEngine> e;
  Recorder a;
  void make(const char* faults) {
    EngineOptions o = testing::quiet();
    std::string err;
    auto plan = parse_fault_plan(faults, &err);
    ASSERT_TRUE(plan) << err;
    o.faults = *plan;
    e = std::make_unique<GpuEngine>(p, 1, o);
    e->add_queue(kA, 7, false);
    e->add_queue(kB, 7, false);
    // A long stream of short kernels: progress is visible at any time.
    for (int i = 0; i < 1000; ++i) e->submit_kernel(kA, kernel(full_wave(p), 100'000), a.cb());
    e->advance_to(1'000'000);
  }
  RunlistResult suspend_a() {
    RunlistResult r;
    e->execute_runlist(0, {kB}, capture(r, *e));
    return r;
  }
};

TEST_F(Faulty, TimeoutFailsWithEtimeAfterThePreemptionTimeoutWhileQueuesKeepRunning) {
  make("timeout@1");
  const SimTime t0 = e->now();
  RunlistResult r;
  e->execute_runlist(0, {kB}, capture(r, *e));
  const std::size_t before = a.done.size();
  e->advance_to(t0 + kTimeout - 1);
  EXPECT_FALSE(r.result);
  EXPECT_GT(a.done.size(), before + 100);  // the HWS never stopped anything
  e->advance_to(t0 + kTimeout);
  ASSERT_TRUE(r.result);
  EXPECT_EQ(*r.result, -ETIME);
  EXPECT_EQ(r.at, t0 + kTimeout);
  const RunlistRecord& rec = e->records().back();
  EXPECT_EQ(rec.result, -ETIME);
  EXPECT_EQ(rec.fault, "timeout");
  // After the timeout the runlist the device asked for is in force.
  EXPECT_FALSE(e->queue_state(kA)->mapped);
}

TEST_F(Faulty, HangStallsTheWholeDeviceUntilThePreemptionTimeout) {
  make("hang@1");
  const SimTime t0 = e->now();
  RunlistResult r;
  e->execute_runlist(0, {kA, kB}, capture(r, *e));  // kind "update": hang counts suspends only
  e->run_until_idle(t0 + 2 * kTimeout);
  EXPECT_EQ(r.result, 0);
  RunlistResult s;
  const SimTime t1 = e->now();
  e->execute_runlist(0, {kB}, capture(s, *e));
  e->advance_to(t1 + p.unmap_latency_ns + 200'000);
  const std::size_t stalled = a.done.size();
  e->advance_to(t1 + kTimeout - 1);
  EXPECT_EQ(a.done.size(), stalled);  // nothing launched during the hang
  EXPECT_FALSE(s.result);
  e->advance_to(t1 + kTimeout);
  EXPECT_EQ(s.result, -ETIME);
  EXPECT_EQ(e->records().back().fault, "hang");
}

TEST_F(Faulty, EioFailsAtOnceAndChangesNothing) {
  make("eio@1");
  RunlistResult r;
  e->execute_runlist(0, {kB}, capture(r, *e));
  EXPECT_EQ(r.result, -EIO);
  EXPECT_EQ(r.at, 1'000'000);
  EXPECT_TRUE(e->queue_state(kA)->mapped);
  EXPECT_TRUE(e->queue_state(kA)->runnable);
}

TEST_F(Faulty, SlowSaveMultipliesTheCwsrSaveCost) {
  make("slow_save@1x25");
  RunlistResult r;
  e->execute_runlist(0, {kB}, capture(r, *e));
  e->run_until_idle(e->now() + 100'000'000);
  EXPECT_EQ(r.result, 0);
  const RunlistRecord& rec = e->records().back();
  ASSERT_GT(rec.bytes_saved, 0u);
  EXPECT_EQ(rec.save_ns, static_cast<SimTime>(p.save_ns(rec.bytes_saved) * 25.0));
  EXPECT_EQ(rec.fault, "slow_save");
}

TEST_F(Faulty, OnlyTheNthSuspendFails) {
  make("eio@2");
  for (int i = 1; i <= 3; ++i) {
    RunlistResult s;
    e->execute_runlist(0, {kB}, capture(s, *e));
    e->run_until_idle(e->now() + 10'000'000);
    ASSERT_TRUE(s.result);
    EXPECT_EQ(*s.result, i == 2 ? -EIO : 0) << "suspend " << i;
    RunlistResult r;
    e->execute_runlist(0, {kA, kB}, capture(r, *e));  // resumes are not counted
    e->run_until_idle(e->now() + 10'000'000);
    EXPECT_EQ(r.result, 0);
  }
}

TEST(FaultPlan, ParsesKindsCountsRepeatsAndFactors) {
  std::string err;
  auto plan = parse_fault_plan("timeout@3, hang@5,eio@4+,slow_save@1x50", &err);
  ASSERT_TRUE(plan) << err;
  ASSERT_EQ(plan->rules.size(), 4u);
  EXPECT_EQ(plan->rules[0].kind, FaultKind::kTimeout);
  EXPECT_EQ(plan->rules[0].nth, 3u);
  EXPECT_TRUE(plan->rules[2].every);
  EXPECT_DOUBLE_EQ(plan->rules[3].factor, 50.0);
  EXPECT_EQ(plan->for_suspend(3)->kind, FaultKind::kTimeout);
  EXPECT_EQ(plan->for_suspend(8)->kind, FaultKind::kEio);
  EXPECT_EQ(plan->for_suspend(1)->kind, FaultKind::kSlowSave);
  EXPECT_FALSE(plan->for_suspend(2));
  EXPECT_TRUE(parse_fault_plan("", &err)->rules.empty());
}

TEST(FaultPlan, RejectsMalformedItemsNamingThem) {
  std::string err;
  EXPECT_FALSE(parse_fault_plan("melt@1", &err));
  EXPECT_NE(err.find("melt@1"), std::string::npos);
  EXPECT_FALSE(parse_fault_plan("timeout@0", &err));
  EXPECT_FALSE(parse_fault_plan("timeout", &err));
  EXPECT_FALSE(parse_fault_plan("eio@2x3", &err));
  EXPECT_NE(err.find("factor"), std::string::npos);
  EXPECT_FALSE(parse_fault_plan("slow_save@1x-2", &err));
}

}  // namespace
}  // namespace gpreempt::sim::gpu
