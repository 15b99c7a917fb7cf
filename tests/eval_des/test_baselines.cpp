// Each baseline behaves as its definition says (docs/evaluation-des.md), on a fixed seed.
#include <gtest/gtest.h>

#include <map>

#include "eval/des/result.h"
#include "common/latency_summary.h"
#include "eval/des/simulation.h"
#include "points.h"

namespace gpreempt::eval::des {
namespace {

double p99(const RunResult& r) { return gpreempt::percentile(r.latencies_ms, 99); }

TEST(DesBaselines, OracleBoundsGpreemptWhichBeatsNoControl) {
  const auto none = run_simulation(testing::small_spec("none"));
  const auto hint = run_simulation(testing::small_spec("gpreempt-hint"));
  const auto oracle = run_simulation(testing::small_spec("oracle"));
  ASSERT_EQ(none.latencies_ms.size(), 200u);
  ASSERT_EQ(hint.latencies_ms.size(), 200u);
  ASSERT_EQ(oracle.latencies_ms.size(), 200u);
  EXPECT_LE(p99(oracle), p99(hint));
  EXPECT_LT(p99(hint), p99(none));
  EXPECT_GT(hint.suspensions, 0u);
  EXPECT_EQ(none.suspensions, 0u);
  EXPECT_GT(hint.offline_iterations, 0u);
}

// The oracle's switch is the GPU model's runlist update on hardware where a preemption costs
// nothing: it saves waves (so it really stopped some) and no update takes any time.
TEST(DesBaselines, TheOraclesSwitchesAreRunlistUpdatesThatCostNothing) {
  const auto oracle = run_simulation(testing::small_spec("oracle"));
  ASSERT_GT(oracle.suspensions, 0u);
  uint64_t suspends = 0, waves_saved = 0;
  for (const auto& r : oracle.runlist) {
    EXPECT_EQ(r.result, 0);
    EXPECT_EQ(r.stopped_ns, r.requested_ns) << "update " << r.seq;
    EXPECT_EQ(r.resumed_ns, r.requested_ns) << "update " << r.seq;
    EXPECT_EQ(r.save_ns, 0) << "update " << r.seq;
    EXPECT_EQ(r.restore_ns, 0) << "update " << r.seq;
    suspends += r.kind == sim::gpu::RunlistKind::kSuspend;
    waves_saved += r.waves_saved;
  }
  EXPECT_EQ(suspends, oracle.suspensions);
  EXPECT_GT(waves_saved, 0u);
}

TEST(DesBaselines, EarlyHintIsNoWorseThanHint) {
  const auto hint = run_simulation(testing::small_spec("gpreempt-hint"));
  const auto early = run_simulation(testing::small_spec("gpreempt-early"));
  EXPECT_LE(p99(early), p99(hint));
  EXPECT_LE(gpreempt::percentile(early.latencies_ms, 50), gpreempt::percentile(hint.latencies_ms, 50));
}

TEST(DesBaselines, TransparentDetectsRequestsByPolling) {
  const auto tr = run_simulation(testing::small_spec("gpreempt-transparent"));
  const auto none = run_simulation(testing::small_spec("none"));
  EXPECT_GT(tr.suspensions, 0u);
  EXPECT_LT(p99(tr), p99(none));
}

// The DES's transparent trigger is gpreemptd's ActivityDetector: besides the requests, it infers
// the online kernels' lengths from the pointer samples and hands them to the grace estimator
// (a busy/idle check of its own would report none).
class TransparentEvents : public Observer {
 public:
  void scheduler_event(sched::Time, const sched::Event& e) override {
    if (const auto* s = std::get_if<sched::event::RequestStarted>(&e))
      started += s->source == sched::RequestSource::kTransparent;
    if (std::holds_alternative<sched::event::KernelObserved>(e)) ++kernels;
  }
  uint64_t started = 0, kernels = 0;
};

TEST(DesBaselines, TransparentRunsTheShippedDetectorWithKernelLengths) {
  TransparentEvents seen;
  const auto r = run_simulation(testing::small_spec("gpreempt-transparent"), &seen);
  EXPECT_GT(seen.started, 0u);
  EXPECT_GT(seen.kernels, seen.started) << "every request runs kernels; their lengths are observed";
  EXPECT_GT(r.suspensions, 0u);
}

// "none" is gpreemptd's [policy] name = "none": the shipped Runtime hears every request and
// decides no suspension.
class Decisions : public Observer {
 public:
  void scheduler_event(sched::Time, const sched::Event& e) override {
    requests += std::holds_alternative<sched::event::RequestStarted>(e);
  }
  void scheduler_actions(sched::Time, const std::vector<sched::Action>& as) override {
    for (const auto& a : as) suspends += std::holds_alternative<sched::action::Suspend>(a);
  }
  uint64_t requests = 0, suspends = 0;
};

TEST(DesBaselines, NoneIsTheRuntimeUnderPolicyNone) {
  Decisions seen;
  const auto r = run_simulation(testing::small_spec("none"), &seen);
  EXPECT_GT(seen.requests, 0u) << "the Runtime is told of the requests";
  EXPECT_EQ(seen.suspends, 0u);
  EXPECT_EQ(r.suspensions, 0u);
}

class InFlight : public Observer {
 public:
  void offline_in_flight(sim::gpu::SimTime, uint32_t, const std::string&, uint32_t n) override {
    peak = std::max(peak, n);
  }
  uint32_t peak = 0;
};

TEST(DesBaselines, ThrottleNeverHasMoreThanMaxInFlightOfflineKernels) {
  auto doc = testing::small_point("throttle");
  doc["throttle"] = {{"max_in_flight", 1}};
  InFlight seen;
  const auto r = run_simulation(parse_spec(doc), &seen);
  EXPECT_EQ(seen.peak, 1u);
  const auto none = run_simulation(testing::small_spec("none"));
  EXPECT_LT(gpreempt::percentile(r.latencies_ms, 50), gpreempt::percentile(none.latencies_ms, 50));
  EXPECT_EQ(r.suspensions, 0u);
}

class Launches : public Observer {
 public:
  void kernel_ran(uint32_t, const std::string&, bool online, sim::gpu::SimTime queued,
                  sim::gpu::SimTime, sim::gpu::SimTime finished) override {
    (online ? on : off).push_back({queued, finished});
  }
  std::vector<std::pair<sim::gpu::SimTime, sim::gpu::SimTime>> on, off;
};

TEST(DesBaselines, ThrottleLaunchesNoOfflineKernelWhileOnlineWorkIsPending) {
  Launches seen;
  const auto r = run_simulation(testing::small_spec("throttle"), &seen);
  // Request windows: from each request's arrival to its completion (one client, FIFO).
  ASSERT_EQ(r.latencies_ms.size(), 200u);
  std::vector<std::pair<sim::gpu::SimTime, sim::gpu::SimTime>> windows;
  // The last kernel of each request ends it; its first kernel was launched at the start. With no
  // queueing between requests at this load a request's kernels are consecutive triples.
  for (std::size_t i = 0; i + 2 < seen.on.size(); i += 3) windows.push_back({seen.on[i].first, seen.on[i + 2].second});
  for (const auto& [queued, fin] : seen.off)
    for (const auto& [a, b] : windows) EXPECT_FALSE(queued > a && queued < b) << "offline launch at " << queued;
}

TEST(DesBaselines, PartitionNeverLetsOfflineUseOnlineCus) {
  const auto r = run_simulation(testing::small_spec("partition"));
  ASSERT_GT(r.partition_offline_capacity_waves, 0u);
  EXPECT_GT(r.partition_offline_peak_waves, 0u);
  EXPECT_LE(r.partition_offline_peak_waves, r.partition_offline_capacity_waves);
  // 25 % of 20 CUs per XCC are online's: offline keeps 15 CUs x 32 waves.
  EXPECT_EQ(r.partition_offline_capacity_waves, 15u * 32u);
  EXPECT_EQ(r.suspensions, 0u);
}

TEST(DesBaselines, PriorityDoesNotPreemptRunningWaves) {
  const auto prio = run_simulation(testing::small_spec("priority"));
  const auto none = run_simulation(testing::small_spec("none"));
  EXPECT_EQ(prio.waves_saved, 0u);  // no wave is ever context-saved
  EXPECT_EQ(prio.suspensions, 0u);
  // ... yet freed slots go to the online queue first.
  EXPECT_LT(gpreempt::percentile(prio.latencies_ms, 50), gpreempt::percentile(none.latencies_ms, 50));
  const auto hint = run_simulation(testing::small_spec("gpreempt-hint"));
  EXPECT_GT(hint.waves_saved, 0u);  // the contrast: a suspend saves waves
}

TEST(DesBaselines, SameSeedGivesByteIdenticalResults) {
  for (const char* b : {"none", "gpreempt-hint", "gpreempt-transparent", "oracle", "throttle"}) {
    const Spec s = testing::small_spec(b);
    const auto a = result_document(s, run_simulation(s), {}).dump();
    const auto c = result_document(s, run_simulation(s), {}).dump();
    EXPECT_EQ(a, c) << b;
  }
  const Spec s1 = testing::small_spec("gpreempt-hint", 200, 1);
  const Spec s2 = testing::small_spec("gpreempt-hint", 200, 2);
  EXPECT_NE(run_simulation(s1).latencies_ms, run_simulation(s2).latencies_ms);
}

TEST(DesBaselines, SuspendTimeoutsAreAnsweredAndRecovered) {
  auto doc = testing::small_point("gpreempt-hint");
  doc["online"][0].erase("requests");
  doc["duration_s"] = 12;  // the model's preemption timeout is 9 s
  doc["model"] = {{"faults", "timeout@2"}};
  const auto r = run_simulation(parse_spec(doc));
  EXPECT_EQ(r.actuation_timeouts, 1u);
  EXPECT_GT(r.latencies_ms.size(), 500u);  // the GPU keeps serving meanwhile
  bool recovery = false;
  for (const auto& d : r.decisions) recovery |= d.reason == "recovery";
  EXPECT_TRUE(recovery);
}

TEST(DesBaselines, EachGpuHasItsOwnArbiter) {
  auto doc = testing::small_point("gpreempt-hint", 100);
  doc["gpus"] = 2;
  doc["offline"].push_back(doc["offline"][0]);
  doc["offline"][1]["name"] = "r50-gpu1";
  doc["offline"][1]["gpu"] = 1;
  const auto r = run_simulation(parse_spec(doc));
  std::map<uint32_t, int> per_gpu;
  for (const auto& d : r.decisions) {
    ++per_gpu[d.gpu];
    for (const auto& t : d.targets) EXPECT_EQ(t, "r50");  // the job on GPU 1 is never touched
  }
  EXPECT_GT(per_gpu[0], 0);
  EXPECT_EQ(per_gpu.count(1), 0u);
  EXPECT_GT(r.clients[2].iterations, r.clients[1].iterations);
}

TEST(DesBaselines, TensorParallelRequestsSuspendEveryGpuTheyUse) {
  auto doc = testing::small_point("gpreempt-hint", 50);
  doc["gpus"] = 8;
  doc["online"][0].erase("gpu");
  doc["online"][0]["gpus"] = {0, 1, 2, 3, 4, 5, 6, 7};
  doc["offline"][0].erase("gpu");
  doc["offline"][0]["gpus"] = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto r = run_simulation(parse_spec(doc));
  std::map<uint32_t, int> suspends;
  for (const auto& d : r.decisions)
    if (d.action == "suspend") ++suspends[d.gpu];
  EXPECT_EQ(suspends.size(), 8u);
  EXPECT_EQ(r.latencies_ms.size(), 50u);
}

}  // namespace
}  // namespace gpreempt::eval::des

namespace gpreempt::eval::des {
namespace {

Spec with_objective(const std::string& slo, uint64_t requests = 400) {
  auto j = testing::small_point("gpreempt-hint", requests);
  j["policy"]["slo"] = nlohmann::ordered_json::parse(slo);
  return parse_spec(j);
}

// An objective the workload meets without help: after the first window the online requests
// preempt nobody, so the offline job keeps more of the GPU than with a suspension per request.
TEST(DesObjective, AnObjectiveMetWithoutHelpStopsSuspending) {
  const auto always = run_simulation(testing::small_spec("gpreempt-hint", 400));
  const auto loose = run_simulation(with_objective(R"({"p99_ms": 1000, "window_s": 2})"));
  EXPECT_LT(loose.suspensions, always.suspensions / 2) << "suspensions: " << loose.suspensions
                                                       << " vs " << always.suspensions;
  EXPECT_GT(loose.offline_iterations, always.offline_iterations);
  // One that nothing meets ends at hold: fewer, longer suspensions (close requests share one),
  // and no more offline work than a suspension per request leaves.
  const auto tight = run_simulation(with_objective(R"({"p99_ms": 0.5, "window_s": 2})"));
  EXPECT_GT(tight.suspensions, 0u);
  EXPECT_LE(tight.offline_iterations, always.offline_iterations);
}

TEST(DesObjective, TheSpecNamesOnePercentile) {
  auto j = testing::small_point("gpreempt-hint");
  j["policy"]["slo"] = {{"p99_ms", 5}, {"p95_ms", 3}};
  EXPECT_THROW(parse_spec(j), SpecError);
  j["policy"]["slo"] = {{"window_s", 5}};
  EXPECT_THROW(parse_spec(j), SpecError);
  j["policy"]["slo"] = {{"p99_ms", 5}, {"window_s", 5}};
  const Spec s = parse_spec(j);
  EXPECT_EQ(s.policy.slo_percentile, 99);
  EXPECT_EQ(s.policy.slo_target_ms, 5);
  EXPECT_EQ(s.policy.slo_window_s, 5);
}

}  // namespace
}  // namespace gpreempt::eval::des
