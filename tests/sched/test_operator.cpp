// Operator suspensions (`gpreempt ctl suspend/resume`) in the scheduler, on a fake clock: what is
// suspended, when it is resumed, and how operator holds and request-driven suspensions combine.
// Also Scheduler::reconfigure (a SIGHUP reload in the daemon).
#include <gtest/gtest.h>

#include "sched_driver.h"

namespace gpreempt::sched::testing {
namespace {

event::OperatorTarget of_class(const std::string& name, std::optional<GpuId> gpu = {}) {
  return {name, std::nullopt, gpu};
}
event::OperatorTarget of_pid(int pid, std::optional<GpuId> gpu = {}, uint64_t start = 1) {
  return {std::nullopt, ProcessKey{pid, start}, gpu};
}

// online 10 on GPU 1; offline 20 on GPU 1, offline 21 on GPUs 1 and 2.
Driver two_gpus(ArbiterConfig c = {}) {
  Driver d(c);
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  d.classify(21, "offline", {1, 2});
  return d;
}

TEST(Operator, SuspendsTheClassOncePerGpuAndResumesWhenTheTimeIsUp) {
  Driver d = two_gpus();
  EXPECT_EQ(d.send(event::OperatorSuspend{of_class("offline"), 300ms}),
            Strings({"suspend gpu1 [20@1 21@1] grace=0us operator",
                     "suspend gpu2 [21@1] grace=0us operator"}));
  EXPECT_EQ(d.state(1, 10), MemberState::kRunning);
  d.complete_suspend(1);
  d.complete_suspend(2);
  EXPECT_EQ(d.advance(300ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns),
            Strings({"resume gpu1 [20@1 21@1] operator_end", "resume gpu2 [21@1] operator_end"}));
  d.complete_resume(1);
  d.complete_resume(2);
  EXPECT_EQ(d.state(2, 21), MemberState::kRunning);
  const auto& acc = d.s.accounting();
  EXPECT_EQ(acc.classes().at("offline").operator_suspensions, 3u);
  EXPECT_EQ(acc.classes().at("offline").suspensions, 3u);
  EXPECT_EQ(acc.process(ProcessKey{21, 1})->operator_suspended_time, 600ms);
  EXPECT_EQ(acc.classes().at("online").operator_suspensions, 0u);
}

TEST(Operator, TargetsOneProcessOnOneGpu) {
  Driver d = two_gpus();
  EXPECT_EQ(d.send(event::OperatorSuspend{of_pid(21, 2), 50ms}),
            Strings({"suspend gpu2 [21@1] grace=0us operator"}));
  EXPECT_EQ(d.state(1, 21), MemberState::kRunning);
  // A pid whose start time differs is another process: nothing.
  EXPECT_TRUE(d.s.operator_targets(of_pid(21, {}, 2)).empty());
  EXPECT_TRUE(d.s.operator_targets(of_class("nosuch")).empty());
  EXPECT_EQ(d.s.operator_targets(of_class("offline")).size(), 3u);
}

TEST(Operator, ResumeEndsItEarly) {
  Driver d = two_gpus();
  d.send(event::OperatorSuspend{of_class("offline"), 10s});
  d.complete_suspend(1);
  d.complete_suspend(2);
  d.advance(5ms);
  EXPECT_EQ(d.send(event::OperatorResume{of_class("offline", 2)}),
            Strings({"resume gpu2 [21@1] operator_end"}));
  EXPECT_EQ(d.send(event::OperatorResume{of_pid(20)}),
            Strings({"resume gpu1 [20@1] operator_end"}));
  d.complete_resume(1);
  EXPECT_EQ(d.state(1, 21), MemberState::kSuspended);
}

TEST(Operator, AnOperatorResumeKeepsWhatAPendingRequestNeeds) {
  Driver d = two_gpus();
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1 21@1] grace=0us request"}));
  d.complete_suspend(1);
  EXPECT_EQ(d.send(event::OperatorSuspend{of_class("offline"), 10s}),
            Strings({"suspend gpu2 [21@1] grace=0us operator"}));
  d.complete_suspend(2);
  EXPECT_EQ(d.send(event::OperatorResume{of_class("offline")}),
            Strings({"resume gpu2 [21@1] operator_end"}));
  EXPECT_EQ(d.advance(50ms), Strings{});  // the online request is still open on GPU 1
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
  d.end(10);
  EXPECT_EQ(d.advance(2ms), Strings({"resume gpu1 [20@1 21@1] idle"}));
  EXPECT_EQ(d.s.accounting().process(ProcessKey{20, 1})->operator_suspensions, 0u);
}

TEST(Operator, TheEndOfARequestDoesNotEndAnOperatorSuspension) {
  Driver d = two_gpus();
  d.send(event::OperatorSuspend{of_class("offline", 1), 100ms});
  d.complete_suspend(1);
  EXPECT_EQ(d.begin(10), Strings{});  // already suspended
  d.advance(10ms);
  EXPECT_EQ(d.end(10), Strings{});
  EXPECT_EQ(d.advance(90ms - 1ns), Strings{});  // the hysteresis passed long ago
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1 21@1] operator_end"}));
}

TEST(Operator, TheHardBoundEndsAnOperatorSuspension) {
  ArbiterConfig c;
  c.max_suspension = 50ms;
  Driver d = two_gpus(c);
  d.send(event::OperatorSuspend{of_pid(20), 200ms});
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(50ms), Strings({"resume gpu1 [20@1] hard_bound"}));
  d.complete_resume(1);
  // The hold is over: not suspended again for the rest of the 200 ms.
  EXPECT_EQ(d.advance(300ms), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kRunning);
}

// gpreemptd's e2e test: `ctl suspend --for 300ms`, and the next `ctl suspend --for 600s` comes
// while the first hold's resume is still in flight. That resume's completion must not drop the new
// hold.
TEST(Operator, AHoldGivenWhileTheLastHoldsResumeIsInFlightStands) {
  ArbiterConfig c;  // the e2e test's [policy]
  c.max_suspension = 600s;
  c.starvation_window = 1000s;
  c.starvation_min_run = 1ms;
  Driver d = two_gpus(c);
  d.send(event::OperatorSuspend{of_pid(20), 300ms});
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(300ms), Strings({"resume gpu1 [20@1] operator_end"}));
  d.advance(1ms);
  EXPECT_EQ(d.send(event::OperatorSuspend{of_pid(20), 600s}), Strings{});  // waits for the resume
  EXPECT_EQ(d.complete_resume(1), Strings({"suspend gpu1 [20@1] grace=0us operator"}));
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(599s), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
}

// The same after the hard bound ended a hold: the bound ends the hold it cut short, not a command
// given after it was decided.
TEST(Operator, AHoldGivenWhileAHardBoundResumeIsInFlightStands) {
  ArbiterConfig c;
  c.max_suspension = 50ms;
  Driver d = two_gpus(c);
  d.send(event::OperatorSuspend{of_pid(20), 200ms});
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(50ms), Strings({"resume gpu1 [20@1] hard_bound"}));
  EXPECT_EQ(d.send(event::OperatorSuspend{of_pid(20), 300ms}), Strings{});
  d.complete_resume(1);
  // The guard's minimum run after a forced resume (100 ms by default) comes first.
  EXPECT_EQ(d.advance(100ms), Strings({"suspend gpu1 [20@1] grace=0us operator"}));
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(50ms), Strings({"resume gpu1 [20@1] hard_bound"}));
}

ArbiterConfig guarded_config(bool overrides) {
  ArbiterConfig c;
  c.max_suspension = 10s;
  c.starvation_window = 100ms;
  c.starvation_min_run = 20ms;
  c.operator_overrides_guard = overrides;
  return c;
}

TEST(Operator, TheStarvationGuardAppliesByDefault) {
  Driver d = two_gpus(guarded_config(false));
  d.send(event::OperatorSuspend{of_pid(20), 300ms});
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(80ms), Strings({"resume gpu1 [20@1] starvation"}));
  d.complete_resume(1);
  // The hold still stands: suspended again once the guard allows (as for a request, at 120 ms).
  EXPECT_EQ(d.advance(40ms), Strings({"suspend gpu1 [20@1] grace=0us operator"}));
}

TEST(Operator, TheConfigMayLetOperatorSuspensionsOverrideTheGuard) {
  Driver d = two_gpus(guarded_config(true));
  d.send(event::OperatorSuspend{of_pid(20), 300ms});
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(300ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"resume gpu1 [20@1] operator_end"}));
  // Requests still obey the guard (its resume waits resume_defer_max for the running request).
  d.complete_resume(1);
  d.advance(1s);
  d.begin(10);
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(80ms), Strings{});
  EXPECT_EQ(d.advance(ArbiterConfig{}.resume_defer_max), Strings({"resume gpu1 [20@1 21@1] starvation"}));
}

TEST(Operator, UnclassifiedProcessesAreNotTargets) {
  Driver d = two_gpus();
  d.send(event::ProcessClassified{ProcessKey{30, 1}, std::nullopt, {1}});
  EXPECT_TRUE(d.s.operator_targets(of_pid(30)).empty());
  EXPECT_EQ(d.send(event::OperatorSuspend{of_pid(30), 1s}), Strings{});
}

TEST(Reconfigure, ProcessesKeepTheirClassByNameAndDecisionsAreTakenAgain) {
  Driver d = two_gpus();
  d.begin(10);
  d.complete_suspend(1);
  // offline now outranks online: its suspension has no reason left.
  SchedClass online{"online", 10, {RequestSource::kHint}, std::nullopt};
  SchedClass offline{"offline", 20, {RequestSource::kHint}, std::nullopt};
  Strings out;
  for (const auto& a : d.s.reconfigure(d.now, {online, offline}, ArbiterConfig{}))
    if (!std::holds_alternative<action::ArmTimer>(a)) out.push_back(describe(a));
  EXPECT_EQ(out, Strings({"resume gpu1 [20@1 21@1] idle"}));
  EXPECT_EQ(d.s.gpu(1)->members().at(ProcessKey{20, 1}).priority, 20);
}

TEST(Reconfigure, AProcessWhoseClassIsGoneIsLeftAloneAndNewKnobsApply) {
  Driver d = two_gpus();
  SchedClass online{"online", 10, {RequestSource::kHint}, std::nullopt};
  SchedClass batch{"batch", 0, {RequestSource::kHint}, std::nullopt};
  ArbiterConfig c;
  c.max_suspension = 30ms;
  d.s.reconfigure(d.now, {online, batch}, c);
  EXPECT_EQ(d.s.gpu(1)->members().count(ProcessKey{20, 1}), 0u);
  EXPECT_EQ(d.s.config().max_suspension, 30ms);
  d.classify(20, "batch", {1});
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1] grace=0us request"}));
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(30ms), Strings({"resume gpu1 [20@1] hard_bound"}));
}

}  // namespace
}  // namespace gpreempt::sched::testing
