// The scheduler driven by event sequences on a fake clock: which actions come out, in which order.
#include <gtest/gtest.h>

#include "sched_driver.h"

namespace gpreempt::sched::testing {
namespace {

using event::Outcome;

// online pid 10, offline pids 20 and 21, all on GPU 1.
Driver one_gpu(ArbiterConfig c = {}) {
  Driver d(c);
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  d.classify(21, "offline", {1});
  return d;
}

TEST(Scheduler, OnlineRequestSuspendsOncePerGpuAndResumesAfterHysteresis) {
  Driver d = one_gpu();
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  // Not suspended until the actuator says so.
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspending);
  d.advance(100us);
  EXPECT_EQ(d.complete_suspend(1), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
  d.advance(5ms);
  EXPECT_EQ(d.end(10), Strings{});
  EXPECT_EQ(d.advance(2ms - 1ns), Strings{});  // inside the idle hysteresis
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1 21@1] idle"}));
  EXPECT_EQ(d.state(1, 21), MemberState::kResuming);
  EXPECT_EQ(d.complete_resume(1), Strings{});
  EXPECT_EQ(d.state(1, 21), MemberState::kRunning);
  const auto& acc = d.s.accounting();
  EXPECT_EQ(acc.classes().at("offline").suspensions, 2u);
  EXPECT_EQ(acc.process(ProcessKey{20, 1})->suspended_time, 7ms);
  EXPECT_EQ(acc.classes().at("online").request_latency.count(), 1u);
  EXPECT_EQ(acc.classes().at("online").request_latency.max(), 5100us);
}

TEST(Scheduler, ANewRequestInsideTheHysteresisKeepsTheSuspension) {
  Driver d = one_gpu();
  d.begin(10, 1);
  d.complete_suspend(1);
  d.end(10, 1);
  d.advance(1ms);
  EXPECT_EQ(d.begin(10, 2), Strings{});
  d.advance(10ms);
  EXPECT_EQ(d.end(10, 2), Strings{});
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1 21@1] idle"}));
}

TEST(Scheduler, DecisionsWaitForTheActionInFlight) {
  Driver d = one_gpu();
  d.begin(10);
  d.end(10);
  // The hysteresis passes while the suspend is still in flight: nothing until it completes.
  EXPECT_EQ(d.advance(5ms), Strings{});
  EXPECT_EQ(d.complete_suspend(1), Strings({"resume gpu1 [20@1 21@1] idle"}));
}

TEST(Scheduler, TwoGpusAreIndependent) {
  Driver d;
  d.classify(10, "online", {1});
  d.classify(11, "online", {2});
  d.classify(20, "offline", {1, 2});
  d.classify(21, "offline", {2});
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1] grace=0us request"}));
  EXPECT_EQ(d.state(2, 20), MemberState::kRunning);
  EXPECT_EQ(d.begin(11), Strings({"suspend gpu2 [20@1 21@1] grace=0us request"}));
  d.complete_suspend(1);
  d.complete_suspend(2);
  d.end(10);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1] idle"}));
  EXPECT_EQ(d.state(2, 20), MemberState::kSuspended);
}

TEST(Scheduler, ATimeoutOnOneGpuLeavesTheOtherAlone) {
  ArbiterConfig c;
  c.failure_backoff = 100ms;
  Driver d(c);
  d.classify(10, "online", {1, 2});
  d.classify(20, "offline", {1});
  d.classify(21, "offline", {2});
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1] grace=0us request",
                                  "suspend gpu2 [21@1] grace=0us request"}));
  // Bit 30 on GPU 1: undo whatever the kernel marked, back off there.
  EXPECT_EQ(d.complete_suspend(1, Outcome::kTimedOut), Strings({"resume gpu1 [20@1] recovery"}));
  EXPECT_EQ(d.complete_suspend(2), Strings{});
  EXPECT_EQ(d.state(2, 21), MemberState::kSuspended);
  EXPECT_EQ(d.complete_resume(1), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kRunning);
  EXPECT_EQ(d.s.gpu(1)->stats().timed_out_targets, 1u);
  EXPECT_EQ(d.s.gpu(2)->stats().timed_out_targets, 0u);
  // The request is still open: GPU 1 tries again only after the back-off; GPU 2 is untouched.
  EXPECT_EQ(d.advance(100ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [20@1] grace=0us request"}));
  EXPECT_EQ(d.s.accounting().classes().at("offline").timed_out_actuations, 1u);
}

TEST(Scheduler, AFailedSuspendIsUndoneAndBacksOffThatGpuOnly) {
  Driver d;
  d.classify(10, "online", {1, 2});
  d.classify(20, "offline", {1});
  d.classify(21, "offline", {2});
  d.begin(10);
  EXPECT_EQ(d.complete_suspend(2, Outcome::kFailed, 5), Strings({"resume gpu2 [21@1] recovery"}));
  d.complete_resume(2);
  d.complete_suspend(1);
  EXPECT_TRUE(d.s.gpu(2)->backoff_until().has_value());
  EXPECT_FALSE(d.s.gpu(1)->backoff_until().has_value());
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
  EXPECT_EQ(d.s.accounting().process(ProcessKey{21, 1})->failed_actuations, 1u);
}

// The actuator escalates a failed resume (DISABLE resumes every queue of the target), so the
// arbiter counts the failure and treats the queues as running: no suspension outlives it.
// (Ported from the retired demo policy, lib/sched/preemption_policy.)
TEST(Scheduler, AFailedResumeStillEndsTheSuspension) {
  Driver d = one_gpu();
  d.begin(10);
  d.complete_suspend(1);
  d.end(10);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1 21@1] idle"}));
  EXPECT_EQ(d.complete_resume(1, Outcome::kFailed), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kRunning);
  EXPECT_EQ(d.state(1, 21), MemberState::kRunning);
  EXPECT_EQ(d.s.accounting().classes().at("offline").failed_actuations, 2u);
  EXPECT_EQ(d.begin(10, 2), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}))
      << "the GPU is not left believing it still holds a suspension";
}

TEST(Scheduler, HardBoundEndsEverySuspension) {
  ArbiterConfig c;
  c.max_suspension = 50ms;
  c.starvation_window = 1000ms;
  c.starvation_min_run = 10ms;
  Driver d = one_gpu(c);
  d.begin(10);  // never finishes
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(50ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1 21@1] hard_bound"}));
  d.complete_resume(1);
  // The offline processes then run min_run before the still-pending request suspends them again.
  EXPECT_EQ(d.advance(10ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  EXPECT_EQ(d.s.accounting().classes().at("offline").forced_resumes, 2u);
}

TEST(Scheduler, StarvationGuardKeepsTheMinimumShareInEveryWindow) {
  ArbiterConfig c;
  c.max_suspension = 10s;  // only the guard limits here
  c.starvation_window = 100ms;
  c.starvation_min_run = 20ms;
  c.resume_defer_max = 0ms;  // the guard alone (the deferral: the next test)
  Driver d = one_gpu(c);
  d.begin(10);
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(80ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1 21@1] starvation"}));
  d.complete_resume(1);
  // It may be suspended again once the window leaves room for a min_run-long suspension: at
  // 120 ms, the window [20 ms, 120 ms] holds 60 ms of suspension (not at 100 ms: 80 ms then).
  EXPECT_EQ(d.advance(40ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  d.complete_suspend(1);
  // Suspended time in the last 100 ms never exceeds 80 ms while the online request goes on.
  for (int i = 0; i < 2000; ++i) {
    for (const auto& a : d.advance(1ms)) {
      if (a.rfind("resume", 0) == 0) d.complete_resume(1);
      if (a.rfind("suspend", 0) == 0) d.complete_suspend(1);
    }
    const auto& m = d.s.gpu(1)->members().at(ProcessKey{20, 1});
    ASSERT_LE(m.guard.suspended_in_window(d.now, c), 80ms) << "at " << d.now.count();
  }
  // Steady state: 80 ms suspended, 40 ms running — long suspensions, not a flap.
  ASSERT_NE(d.s.accounting().process(ProcessKey{20, 1}), nullptr);
  const auto& acc = *d.s.accounting().process(ProcessKey{20, 1});
  EXPECT_GE(acc.suspended_time, 1300ms);
  EXPECT_LE(acc.suspensions, 2000u / 120 + 2);
}

TEST(Scheduler, AGuardResumeWaitsForTheRunningRequestToEndAtMostResumeDeferMax) {
  ArbiterConfig c;
  c.starvation_window = 100ms;
  c.starvation_min_run = 20ms;
  c.resume_defer_max = 5ms;
  Driver d = one_gpu(c);
  d.begin(10, 1);
  d.complete_suspend(1);
  // Due at 80 ms, while request 1 runs: held back, and issued when the request ends.
  EXPECT_EQ(d.advance(83ms), Strings{});
  EXPECT_EQ(d.end(10, 1), Strings({"resume gpu1 [20@1 21@1] starvation"}));
  d.complete_resume(1);
  // A request that outlasts the bound: the resume comes 5 ms late, not later.
  d.advance(100ms);
  d.begin(10, 2);
  d.complete_suspend(1);
  const Time suspended = d.now;
  std::vector<std::string> got;
  while (got.empty() && d.now < suspended + 200ms) got = d.advance(100us);
  EXPECT_EQ(got, Strings({"resume gpu1 [20@1 21@1] starvation"}));
  EXPECT_EQ(d.now - suspended, 85ms);
}

ArbiterConfig coalescing() {
  ArbiterConfig c;
  c.coalesce_flaps = true;  // off by default
  return c;
}

// One flap: request 1, its idle resume after 2 ms, and request 2 `gap` after that resume.
void flap_once(Driver& d, Duration gap) {
  d.begin(10);
  d.complete_suspend(1);
  d.end(10);
  std::vector<std::string> got;
  while (got.empty()) got = d.advance(100us);
  EXPECT_EQ(got, Strings({"resume gpu1 [20@1 21@1] idle"}));
  d.complete_resume(1);
  d.advance(gap);
}

TEST(Scheduler, ASuspendSoonAfterAnIdleResumeDoublesTheHysteresisSoTheNextPairCoalesces) {
  Driver d = one_gpu(coalescing());
  flap_once(d, 1ms);
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  EXPECT_EQ(d.s.gpu(1)->stats().flaps, 1u);
  EXPECT_EQ(d.s.gpu(1)->coalesced_hysteresis(), 4ms);
  d.complete_suspend(1);
  d.end(10);
  // The same gap again: 3 ms after the request ended, still inside the doubled hysteresis.
  EXPECT_EQ(d.advance(3ms), Strings{});
  EXPECT_EQ(d.begin(10), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
  d.end(10);
  EXPECT_EQ(d.advance(4ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1 21@1] idle"}));
  d.complete_resume(1);
  // A request long after that resume: the resume was worth it, the hysteresis halves back.
  d.advance(50ms);
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  EXPECT_EQ(d.s.gpu(1)->stats().flaps, 1u);
  EXPECT_EQ(d.s.gpu(1)->coalesced_hysteresis(), 0ns);
}

TEST(Scheduler, CoalescedHysteresisNeverExceedsHoldAfterIdle) {
  Driver d = one_gpu(coalescing());  // resume_after_idle 2 ms, hold_after_idle 20 ms
  std::vector<Duration> seen;
  for (int i = 0; i < 5; ++i) {
    flap_once(d, 1ms);
    d.begin(10);
    seen.push_back(d.s.gpu(1)->coalesced_hysteresis());
    d.complete_suspend(1);
    d.end(10);
  }
  EXPECT_EQ(seen, (std::vector<Duration>{4ms, 8ms, 16ms, 20ms, 20ms}));
}

TEST(Scheduler, WithoutCoalescingFlapsAreCountedButTheHysteresisStays) {
  Driver d = one_gpu();  // coalesce_flaps is off by default
  flap_once(d, 1ms);
  d.begin(10);
  d.complete_suspend(1);
  EXPECT_EQ(d.s.gpu(1)->stats().flaps, 1u);
  EXPECT_EQ(d.s.gpu(1)->coalesced_hysteresis(), 0ns);
  d.end(10);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1 21@1] idle"}));
}

TEST(Scheduler, OnlyIdleResumesAreJudgedAsFlaps) {
  Driver d = one_gpu(coalescing());
  EXPECT_EQ(d.send(event::OperatorSuspend{{"offline", std::nullopt, std::nullopt}, 10ms}),
            Strings({"suspend gpu1 [20@1 21@1] grace=0us operator"}));
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(10ms), Strings({"resume gpu1 [20@1 21@1] operator_end"}));
  d.complete_resume(1);
  // A request right after the hold ended: the operator chose that resume, it is no flap.
  d.advance(1ms);
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  EXPECT_EQ(d.s.gpu(1)->stats().flaps, 0u);
  EXPECT_EQ(d.s.gpu(1)->coalesced_hysteresis(), 0ns);
}

TEST(Scheduler, ExpectedRequestSuspendsEarlyAndIsBoundedWhenItNeverComes) {
  Driver d = one_gpu();  // expect_lead 2 ms, expect_timeout 20 ms, hysteresis 2 ms
  EXPECT_EQ(d.send(event::RequestExpected{ProcessKey{10, 1}, 10ms}), Strings{});
  EXPECT_EQ(d.advance(8ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [20@1 21@1] grace=0us expected"}));
  d.complete_suspend(1);
  // The request never comes: 20 ms after its announced time, plus the hysteresis.
  EXPECT_EQ(d.advance(24ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1 21@1] idle"}));
}

TEST(Scheduler, ExpectedRequestThatComesKeepsTheGpuClear) {
  Driver d = one_gpu();
  d.send(event::RequestExpected{ProcessKey{10, 1}, 1ms});
  EXPECT_EQ(d.log.back(), "0us suspend gpu1 [20@1 21@1] grace=0us expected");
  d.complete_suspend(1);
  d.advance(1ms);
  EXPECT_EQ(d.begin(10), Strings{});
  EXPECT_EQ(d.advance(100ms), Strings{});  // past the expectation's bound: the request holds it
  d.end(10);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1 21@1] idle"}));
}

TEST(Scheduler, AnExpectationAnnouncedDuringARequestOutlivesItsEnd) {
  Driver d = one_gpu();  // expect_lead 2 ms, expect_timeout 20 ms, hysteresis 2 ms
  d.begin(10);
  d.complete_suspend(1);
  // The next request is announced while this one still runs (a pipelined client) ...
  EXPECT_EQ(d.send(event::RequestExpected{ProcessKey{10, 1}, 3ms}), Strings{});
  d.end(10);
  // ... so the GPU is not resumed when the end's hysteresis runs out (2 ms) and suspended again
  // for the announced request (3 ms): its lead (from 1 ms) overlaps the hysteresis.
  EXPECT_EQ(d.advance(3ms), Strings{});
  EXPECT_EQ(d.begin(10), Strings{});
  d.end(10);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1 21@1] idle"}));
}

TEST(Scheduler, AReusedPidNeverInheritsASuspension) {
  Driver d = one_gpu();
  d.begin(10);
  d.complete_suspend(1);
  // pid 20 exited unseen and a new process got its pid: it is another process, still running.
  EXPECT_EQ(d.classify(20, "offline", {1}, /*start=*/999),
            Strings({"suspend gpu1 [20@999] grace=0us request"}));
  EXPECT_FALSE(d.s.gpu(1)->has(ProcessKey{20, 1}));
  d.complete_suspend(1);
  d.end(10);
  // Resumes name the live process only, never the old key.
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@999 21@1] idle"}));
  // Events about the old key are ignored.
  d.complete_resume(1);
  EXPECT_EQ(d.send(event::RequestStarted{ProcessKey{20, 1}, 7, RequestSource::kHint}), Strings{});
  EXPECT_EQ(d.s.accounting().unknown_requests(), 1u);
}

TEST(Scheduler, AnOnlinePidReusedByAnotherProcessDoesNotKeepItsRequest) {
  Driver d = one_gpu();
  d.begin(10);
  d.complete_suspend(1);
  // The online process died mid-request and its pid came back as an unclassified process.
  EXPECT_EQ(d.send(event::ProcessAppeared{ProcessKey{10, 50}, {1}}),
            Strings({"resume gpu1 [20@1 21@1] idle"}));
  EXPECT_EQ(d.s.accounting().classes().at("online").requests_aborted, 1u);
}

TEST(Scheduler, NLevelsNest) {
  std::vector<SchedClass> classes{{"top", 20, {RequestSource::kHint}, std::nullopt},
                                  {"middle", 10, {RequestSource::kHint}, std::nullopt},
                                  {"bottom", 0, {RequestSource::kHint}, std::nullopt}};
  Driver d({}, classes);
  d.classify(1, "top", {0});
  d.classify(2, "middle", {0});
  d.classify(3, "bottom", {0});
  EXPECT_EQ(d.begin(2), Strings({"suspend gpu0 [3@1] grace=0us request"}));
  d.complete_suspend(0);
  EXPECT_EQ(d.begin(1), Strings({"suspend gpu0 [2@1] grace=0us request"}));
  d.complete_suspend(0);
  d.end(1);
  // The top class is done: the middle one resumes, the bottom one stays suspended by the middle.
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu0 [2@1] idle"}));
  d.complete_resume(0);
  EXPECT_EQ(d.state(0, 3), MemberState::kSuspended);
  d.end(2);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu0 [3@1] idle"}));
}

TEST(Scheduler, RequestsCountOnlyThroughTheClassTriggersAndFromHigherClasses) {
  std::vector<SchedClass> classes{{"online", 10, {RequestSource::kTransparent}, std::nullopt},
                                  {"offline", 0, {RequestSource::kHint}, std::nullopt}};
  Driver d({}, classes);
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  EXPECT_EQ(d.begin(10, 1, 1, RequestSource::kHint), Strings{});
  EXPECT_EQ(d.s.accounting().classes().at("online").requests_ignored, 1u);
  // An offline process's hint suspends nothing: there is nothing below it.
  EXPECT_EQ(d.begin(20), Strings{});
  EXPECT_EQ(d.begin(10, 2, 1, RequestSource::kTransparent),
            Strings({"suspend gpu1 [20@1] grace=0us request"}));
}

TEST(Scheduler, UnclassifiedProcessesAreLeftAlone) {
  Driver d;
  d.classify(10, "online", {1});
  d.send(event::ProcessAppeared{ProcessKey{30, 1}, {1}});
  d.classify(31, std::string("no-such-class"), {1});
  d.send(event::ProcessClassified{ProcessKey{32, 1}, std::nullopt, {1}});
  EXPECT_EQ(d.begin(10), Strings{});
  EXPECT_EQ(d.begin(30), Strings{});
}

TEST(Scheduler, GraceFollowsTheObservedKernelLengths) {
  Driver d = one_gpu();
  for (int i = 0; i < 20; ++i) d.send(event::KernelObserved{1, ProcessKey{20, 1}, 40us});
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1 21@1] grace=50us request"}));
  d.complete_suspend(1);
  d.end(10);
  d.advance(2ms);
  d.complete_resume(1);
  // Long kernels: save their waves at once.
  for (int i = 0; i < 64; ++i) d.send(event::KernelObserved{1, ProcessKey{21, 1}, 5ms});
  EXPECT_EQ(d.begin(10, 2), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
}

TEST(Scheduler, WithoutDebugTrapSuspendTheGpuFallsBackToPriorities) {
  Driver d;
  d.send(event::GpuCapability{1, false, "KFD 1.12 < 1.13"});
  d.classify(10, "online", {1});
  EXPECT_EQ(d.classify(20, "offline", {1}), Strings({"priority-only gpu1 10@1=15 20@1=0"}));
  EXPECT_EQ(d.begin(10), Strings{});
  // GPU 2 can suspend: the open request of 10, now also on GPU 2, suspends there.
  d.classify(21, "offline", {2});
  EXPECT_EQ(d.classify(10, "online", {1, 2}), Strings({"suspend gpu2 [21@1] grace=0us request"}));
}

TEST(Scheduler, ExitsAreHandled) {
  Driver d = one_gpu();
  d.begin(10);
  d.complete_suspend(1);
  d.advance(3ms);
  // An offline process that exits while suspended needs no resume.
  EXPECT_EQ(d.send(event::ProcessExited{ProcessKey{21, 1}}), Strings{});
  EXPECT_EQ(d.s.accounting().classes().at("offline").suspended_time, 3ms);
  // The online process exits mid-request: its request ends there, without hysteresis.
  EXPECT_EQ(d.send(event::ProcessExited{ProcessKey{10, 1}}), Strings({"resume gpu1 [20@1] idle"}));
  // A suspend target that vanished before the actuator reached it.
  d.complete_resume(1);
  d.classify(11, "online", {1});
  d.begin(11);
  EXPECT_EQ(d.complete_suspend(1, Outcome::kGone), Strings{});
  EXPECT_FALSE(d.s.gpu(1)->has(ProcessKey{20, 1}));
}

TEST(Scheduler, ShutdownResumesEverything) {
  Driver d = one_gpu();
  d.classify(22, "offline", {2});
  d.classify(12, "online", {2});
  d.begin(10);
  d.begin(12);
  d.complete_suspend(1);
  // GPU 2's suspend is still in flight: resumed too.
  EXPECT_EQ(d.send(event::Shutdown{}),
            Strings({"resume gpu1 [20@1 21@1] shutdown", "resume gpu2 [22@1] shutdown"}));
  d.complete_resume(1);
  EXPECT_EQ(d.begin(10, 5), Strings{});  // nothing is suspended any more
}

TEST(Scheduler, StaleCompletionsAreIgnored) {
  Driver d = one_gpu();
  d.begin(10);
  EXPECT_EQ(d.send(Driver::completion(9999, 1, {ProcessKey{20, 1}}, Outcome::kDone, 0)), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspending);
  EXPECT_EQ(d.s.gpu(1)->stats().stale_completions, 1u);
}

}  // namespace
}  // namespace gpreempt::sched::testing
