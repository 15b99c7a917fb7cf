// The objective's controller on a fake clock (slo_controller.h): the least protection that keeps
// a class's latency objective, one step at a time, each move with its reason; and the scheduler
// acting on it — a class whose objective holds without help preempts nobody, one that needs more
// holds lower classes across close requests.
#include <gtest/gtest.h>

#include "sched/slo_controller.h"
#include "sched_driver.h"

namespace gpreempt::sched::testing {
namespace {

SchedClass with_objective(double p, Duration target, Duration window = 10s) {
  SchedClass c{"online", 10, {RequestSource::kHint}, std::nullopt};
  Objective o;
  o.percentile = p;
  o.target = target;
  o.window = window;
  c.objective = o;
  return c;
}

// `n` requests of class online, one every `gap`, each `latency` long; returns the time after.
Time feed(SloController& s, Time t, int n, Duration gap, Duration latency, int* changes = nullptr) {
  for (int i = 0; i < n; ++i) {
    t += gap;
    if (s.record("online", t, latency) && changes) ++*changes;
  }
  return t;
}

TEST(SloController, NeedsEnoughRequestsToJudgeAPercentile) {
  EXPECT_EQ(SloController::min_samples(99), 100u);
  EXPECT_EQ(SloController::min_samples(99.9), 1000u);
  EXPECT_EQ(SloController::min_samples(95), 20u);
  EXPECT_EQ(SloController::min_samples(50), 20u);
}

TEST(SloController, RelaxesOneStepPerWindowWhileTheObjectiveHolds) {
  SloController s;
  s.configure({with_objective(99, 5ms, 10s)}, Time{0});
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  int changes = 0;
  // 9.9 s of fast requests: plenty of evidence, but not a whole window yet.
  Time t = feed(s, Time{0}, 99, 100ms, 1ms, &changes);
  EXPECT_EQ(changes, 0);
  t = feed(s, t, 1, 100ms, 1ms, &changes);
  EXPECT_EQ(s.action("online"), Protection::kLate);
  EXPECT_EQ(changes, 1);
  const auto& st = s.states().at("online");
  EXPECT_EQ(st.since, t);
  EXPECT_NE(st.why.find("trying less"), std::string::npos) << st.why;
  EXPECT_NE(st.why.find("p99 <= 5 ms over 10 s"), std::string::npos) << st.why;
  // Another window under late, as fast: nothing at all.
  t = feed(s, t, 100, 100ms, 1ms, &changes);
  EXPECT_EQ(s.action("online"), Protection::kNone);
  EXPECT_EQ(changes, 2);
}

TEST(SloController, ABreachEscalatesAtOnceAndTheBrokenStepWaitsBeforeItIsTriedAgain) {
  SloController s;
  s.configure({with_objective(99, 5ms, 1s)}, Time{0});
  Time t = feed(s, Time{0}, 210, 10ms, 1ms);
  ASSERT_EQ(s.action("online"), Protection::kNone);
  // Unprotected, two requests over the target: one is all 100 may have, so it is broken already.
  t = feed(s, t, 1, 10ms, 9ms);
  EXPECT_EQ(s.action("online"), Protection::kNone);
  t = feed(s, t, 1, 10ms, 9ms);
  EXPECT_EQ(s.action("online"), Protection::kLate);
  EXPECT_NE(s.states().at("online").why.find("2 requests over the target (1 allowed in 100) under none"),
            std::string::npos)
      << s.states().at("online").why;
  // Fast again under late: none broke 0.02 s ago, so it is not tried for 6 windows.
  t = feed(s, t, 500, 10ms, 1ms);  // 5 s
  EXPECT_EQ(s.action("online"), Protection::kLate);
  t = feed(s, t, 200, 10ms, 1ms);  // past 6 s since the breach
  EXPECT_EQ(s.action("online"), Protection::kNone);
}

TEST(SloController, PerRequestNotEnoughEscalatesToHoldAndNoFurther) {
  SloController s;
  s.configure({with_objective(95, 5ms, 10s)}, Time{0});
  // p95 over the target with 20 requests under per_request.
  Time t = feed(s, Time{0}, 18, 10ms, 1ms);
  t = feed(s, t, 2, 10ms, 8ms);
  EXPECT_EQ(s.action("online"), Protection::kHold);
  t = feed(s, t, 40, 10ms, 8ms);
  EXPECT_EQ(s.action("online"), Protection::kHold);
  EXPECT_EQ(s.states().at("online").changes, 1u);
}

TEST(SloController, AReloadKeepsAnUnchangedObjectivesStateAndRestartsAChangedOne) {
  SloController s;
  s.configure({with_objective(99, 5ms, 1s)}, Time{0});
  feed(s, Time{0}, 250, 10ms, 1ms);
  ASSERT_EQ(s.action("online"), Protection::kNone);
  s.configure({with_objective(99, 5ms, 1s)}, 3s);
  EXPECT_EQ(s.action("online"), Protection::kNone);
  s.configure({with_objective(99, 4ms, 1s)}, 3s);
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  s.configure({SchedClass{"online", 10, {RequestSource::kHint}, std::nullopt}}, 3s);
  EXPECT_TRUE(s.states().empty());
}

// The scheduler with an objective: online pid 10, offline pid 20, GPU 1.
Driver with_slo(Duration target, Duration window) {
  SchedClass offline{"offline", 0, {RequestSource::kHint}, std::nullopt};
  Driver d({}, {with_objective(99, target, window), offline});
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  return d;
}

TEST(SloScheduler, AClassWhoseObjectiveHoldsWithoutHelpPreemptsNobody) {
  Driver d = with_slo(5ms, 2s);
  // Quick requests, each suspending and resuming the offline process (13 ms a turn), until the
  // window has seen more than the 100 a p99 needs.
  for (uint64_t i = 1; i <= 400; ++i) {
    d.advance(10ms);
    d.begin(10, i);
    if (d.state(1, 20) == MemberState::kSuspending) d.complete_suspend(1);
    d.advance(1ms);
    d.end(10, i);
    d.advance(2ms);
    if (d.state(1, 20) == MemberState::kResuming) d.complete_resume(1);
  }
  EXPECT_EQ(d.s.objectives().action("online"), Protection::kNone);
  d.advance(10ms);
  EXPECT_EQ(d.begin(10, 200), Strings{}) << "no suspension for a request the objective does not need";
  EXPECT_EQ(d.state(1, 20), MemberState::kRunning);
}

TEST(SloScheduler, LateSuspendsOnlyForARequestThatOutlivesHalfTheTarget) {
  SchedClass offline{"offline", 0, {RequestSource::kHint}, std::nullopt};
  Driver d({}, {with_objective(99, 4ms, 2s), offline});
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  // A window of quick requests under per_request relaxes to late.
  for (uint64_t i = 1; d.s.objectives().action("online") != Protection::kLate && i < 500; ++i) {
    d.advance(10ms);
    d.begin(10, i);
    d.complete_suspend(1);
    d.advance(500us);
    d.end(10, i);
    d.advance(2ms);
    d.complete_resume(1);
  }
  ASSERT_EQ(d.s.objectives().action("online"), Protection::kLate);
  d.advance(10ms);
  // Under late: nothing for the first 2 ms (half of 4), then a suspension.
  EXPECT_EQ(d.begin(10, 1000), Strings{});
  EXPECT_EQ(d.advance(2ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [20@1] grace=0us request"}));
  d.complete_suspend(1);
  d.advance(1ms);
  d.end(10, 1000);
  // The hysteresis after a late request keeps it, as for any suspension.
  EXPECT_EQ(d.advance(2ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1] idle"}));
  d.complete_resume(1);
  // A request that ends within 2 ms costs nothing.
  d.advance(10ms);
  EXPECT_EQ(d.begin(10, 1001), Strings{});
  d.advance(1900us);
  EXPECT_EQ(d.end(10, 1001), Strings{});
  EXPECT_EQ(d.advance(10ms), Strings{});
}

TEST(SloScheduler, HoldKeepsLowerClassesSuspendedAcrossCloseRequests) {
  ArbiterConfig c;
  c.hold_after_idle = 20ms;
  SchedClass offline{"offline", 0, {RequestSource::kHint}, std::nullopt};
  SchedClass online = with_objective(95, 2ms, 10s);
  Driver d(c, {online, offline});
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  // 20 requests of 3 ms under per_request: p95 over 2 ms, so hold.
  for (uint64_t i = 1; i <= 20; ++i) {
    d.advance(50ms);
    d.begin(10, i);
    if (d.state(1, 20) == MemberState::kSuspending) d.complete_suspend(1);
    d.advance(3ms);
    d.end(10, i);
    d.advance(2ms);
    if (d.state(1, 20) == MemberState::kResuming) d.complete_resume(1);
  }
  ASSERT_EQ(d.s.objectives().action("online"), Protection::kHold);
  // The last request ended 2 ms ago under hold: the offline process stays suspended until 20 ms.
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
  EXPECT_EQ(d.advance(18ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1] idle"}));
}

}  // namespace
}  // namespace gpreempt::sched::testing
