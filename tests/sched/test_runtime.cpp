// Runtime: the Scheduler, the book of what is really suspended, and orphan recovery as the
// scheduler's own actions, through the orders of events the daemon's soak met — an answer that
// arrives after its target exited, or after it closed its queues while its resume was in flight,
// or after its pid was taken by a new process. A fake actuator port holds each action "in flight"
// until the test answers it.
#include "sched/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <set>

#include "sched/classifier.h"
#include "sched/config.h"
#include "support/fake_actuator.h"

namespace gpreempt::sched {
namespace {

using namespace std::chrono_literals;

constexpr GpuId kGpu = 7;

using gpreempt::testing::FakeActuator;

struct Books {
  Config config = builtin_config();
  Classifier classifier{config.classes};
  Time t{1s};
  FakeActuator actuator{[this](const event::ActuationCompleted& c) {
    t += 1ms;
    runtime.completed(t, c);
  }};
  std::optional<Time> timer;
  Runtime runtime{classifier.classes(),
                  config.policy,
                  {&actuator, [this](std::optional<Time> at) { timer = at; },
                   [this](Time, const std::vector<Action>& as) {
                     for (const auto& a : as) observed(a);
                   },
                   [this](Time, const Event& e) { inspected.push_back(e); },
                   [this](Time, const RequestDone& d) { done.push_back(d); },
                   [this](Time, const ProcessKey& k) { left.push_back(k); }}};
  std::vector<RequestDone> done;  // what the request port was told
  std::vector<ProcessKey> left;   // what the process_left port was told
  std::vector<Event> inspected;  // what reached the Scheduler
  // What the daemon's log would say, per process on kGpu (the soak's check).
  std::map<ProcessKey, std::map<std::string, int>> decided;
  std::map<ProcessKey, bool> suspended;
  std::set<ProcessKey> live;

  void observed(const Action& a) {
    if (auto* s = std::get_if<action::Suspend>(&a)) {
      for (const auto& k : s->targets) {
        ++decided[k]["suspend"];
        suspended[k] = true;
      }
    } else if (auto* r = std::get_if<action::Resume>(&a)) {
      const char* what = r->reason == ResumeReason::kRecovery && !scheduler_has(r->gpu, r->targets)
                             ? "orphan_resume"
                             : "resume";
      for (const auto& k : r->targets) {
        ++decided[k][what];
        suspended[k] = false;
      }
    }
  }
  bool scheduler_has(GpuId g, const std::vector<ProcessKey>& keys) const {
    const GpuArbiter* a = runtime.scheduler().gpu(g);
    return a && std::all_of(keys.begin(), keys.end(), [&](const ProcessKey& k) { return a->has(k); });
  }
  void event(const Event& e) {
    t += 1ms;
    runtime.dispatch(t, e);
  }
  // The transparent trigger's sample of `k`'s one queue on kGpu.
  void sample(const ProcessKey& k, uint64_t rptr, uint64_t wptr) {
    t += 1ms;
    runtime.queues_sampled(t, k, {{kGpu, 1, rptr, wptr}});
  }
  void appear(const ProcessKey& k, const std::string& cls) {
    live.insert(k);
    event(event::ProcessAppeared{k, {kGpu}});
    event(event::ProcessClassified{k, cls, {kGpu}});
  }
  void exit(const ProcessKey& k) {
    live.erase(k);
    actuator.exit(k);
    if (suspended[k]) ++decided[k]["exit"];
    suspended[k] = false;
    event(event::ProcessExited{k});
  }
  const GpuSuspensionTally& tally() {
    static const GpuSuspensionTally none;
    const GpuSuspensionTally* g = runtime.suspensions().gpu(kGpu);
    return g ? *g : none;
  }
  // Answers the oldest action in flight, every target done.
  FakeActuator::Pending complete() { return actuator.answer_next(); }
  void settle() { actuator.answer_all(); }

  // The soak's invariants.
  void expect_consistent() {
    uint64_t by_gpu = 0, by_class = 0;
    for (const auto& [g, tally] : runtime.suspensions().gpus()) by_gpu += tally.suspensions;
    for (const auto& [name, s] : runtime.scheduler().accounting().classes()) by_class += s.suspensions;
    EXPECT_EQ(by_gpu, by_class) << "suspensions summed over GPUs and over classes";
    for (auto& [k, c] : decided)
      EXPECT_EQ(c["suspend"], c["resume"] + c["orphan_resume"] + c["exit"] + (suspended[k] ? 1 : 0))
          << to_string(k) << ": suspends decided == resumes + exits while suspended";
    for (const auto& [g, tally] : runtime.suspensions().gpus())
      for (const auto& [k, since] : tally.suspended_since)
        EXPECT_TRUE(live.count(k)) << to_string(k) << " exited but is booked suspended";
    EXPECT_EQ(runtime.in_flight(), actuator.pending.size());
  }
};

const ProcessKey kOnline{100, 1}, kOffline{200, 2};

// Suspends kOffline for a request of kOnline; the suspend is left in flight.
void begin_request(Books& b) {
  b.appear(kOnline, "online");
  b.appear(kOffline, "offline");
  b.event(event::RequestStarted{kOnline, 1, RequestSource::kHint});
  ASSERT_EQ(b.actuator.pending.size(), 1u);
  ASSERT_TRUE(b.actuator.pending.front().suspend);
  ASSERT_EQ(b.actuator.pending.front().targets, std::vector<ProcessKey>{kOffline});
}

template <class T>
std::size_t count(const std::vector<Event>& events) {
  return static_cast<std::size_t>(
      std::count_if(events.begin(), events.end(), [](const Event& e) { return std::holds_alternative<T>(e); }));
}

// The transparent trigger's samples are read by the Runtime's own ActivityDetector: work on the
// online process's queue is a request, and the offline process is suspended for it.
TEST(Runtime, PointerSamplesBecomeARequestThatSuspends) {
  Books b;
  b.appear(kOnline, "online");
  b.appear(kOffline, "offline");
  b.sample(kOnline, 0, 0);
  EXPECT_TRUE(b.actuator.pending.empty()) << "an idle queue is no request";
  b.sample(kOnline, 0, 2);
  ASSERT_EQ(b.actuator.pending.size(), 1u);
  EXPECT_TRUE(b.actuator.pending.front().suspend);
  EXPECT_EQ(b.actuator.pending.front().targets, std::vector<ProcessKey>{kOffline});
  EXPECT_EQ(count<event::RequestStarted>(b.inspected), 1u);
  EXPECT_TRUE(b.runtime.detector().busy(kOnline));
  b.settle();
  b.sample(kOnline, 2, 2);
  EXPECT_EQ(count<event::RequestFinished>(b.inspected), 1u) << "the queue drained";
  ASSERT_EQ(b.done.size(), 1u) << "a transparent request is measured like a hinted one";
  EXPECT_EQ(b.done[0].key, kOnline);
  EXPECT_EQ(b.done[0].source, RequestSource::kTransparent);
  EXPECT_EQ(b.done[0].class_name, "online");
  EXPECT_EQ(b.done[0].gpus, std::vector<GpuId>{kGpu});
  EXPECT_GT(b.done[0].latency, Duration::zero());
}

// The request port is told of each request the Scheduler saw through, once, with the latency it
// measured; a finish for a request it never opened (unknown, or a source the class ignores) is
// not a request.
TEST(Runtime, EachFinishedRequestIsMeasuredOnce) {
  Books b;
  b.appear(kOnline, "online");
  b.appear(kOffline, "offline");
  b.event(event::RequestStarted{kOnline, 1, RequestSource::kHint});
  const Time began = b.t;
  b.settle();
  b.event(event::RequestFinished{kOnline, 1, RequestSource::kHint});
  ASSERT_EQ(b.done.size(), 1u);
  EXPECT_EQ(b.done[0].latency, b.t - began);
  b.event(event::RequestFinished{kOnline, 1, RequestSource::kHint});
  b.event(event::RequestFinished{kOnline, 9, RequestSource::kHint});
  b.event(event::RequestStarted{kOffline, 1, RequestSource::kTransparent});
  b.event(event::RequestFinished{kOffline, 1, RequestSource::kTransparent});
  EXPECT_EQ(b.done.size(), 1u);
}

// A process that exits with a transparent request open: the request ends before the exit reaches
// the Scheduler, and the detector forgets the process.
TEST(Runtime, AnExitEndsTheOpenTransparentRequestFirst) {
  Books b;
  b.appear(kOnline, "online");
  b.appear(kOffline, "offline");
  b.sample(kOnline, 0, 0);
  b.sample(kOnline, 0, 3);
  ASSERT_TRUE(b.runtime.detector().busy(kOnline));
  b.settle();
  b.inspected.clear();
  b.exit(kOnline);
  ASSERT_GE(b.inspected.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<event::RequestFinished>(b.inspected[0]));
  EXPECT_TRUE(std::holds_alternative<event::ProcessExited>(b.inspected[1]));
  EXPECT_FALSE(b.runtime.detector().busy(kOnline));
  b.settle();
  b.expect_consistent();
}

TEST(Runtime, ASuspendCompletingAfterItsProcessExitedBooksNothing) {
  Books b;
  begin_request(b);
  b.exit(kOffline);
  b.complete();  // done, but its process is gone
  b.settle();
  EXPECT_TRUE(b.tally().suspended_since.empty());
  EXPECT_EQ(b.tally().suspensions, 0u);
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 0) << "a gone process is not resumed";
  b.expect_consistent();
}

TEST(Runtime, AProcessClosingItsQueuesWhileItsResumeIsInFlightIsResumedOnce) {
  Books b;
  begin_request(b);
  b.complete();
  EXPECT_EQ(b.tally().suspensions, 1u);
  b.event(event::RequestFinished{kOnline, 1, RequestSource::kHint});
  for (int i = 0; i < 100 && b.actuator.pending.empty(); ++i) {  // the idle resume comes on a timer
    b.t += 10ms;
    b.event(event::TimerFired{});
  }
  ASSERT_EQ(b.actuator.pending.size(), 1u);
  ASSERT_FALSE(b.actuator.pending.front().suspend) << "the scheduler's resume, in flight";
  // The offline process closes its queues meanwhile: the arbiter drops it.
  b.event(event::ProcessClassified{kOffline, "offline", {}});
  EXPECT_TRUE(b.runtime.suspensions().in_flight(kGpu, kOffline));
  EXPECT_TRUE(b.runtime.suspensions().orphans(kGpu).empty());
  b.settle();
  EXPECT_EQ(b.decided[kOffline]["resume"], 1);
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 0) << "one resume for one suspension";
  EXPECT_TRUE(b.tally().suspended_since.empty());
  b.expect_consistent();
}

TEST(Runtime, ASuspendCompletingAfterItsProcessLeftTheGpuIsResumedNotCounted) {
  Books b;
  begin_request(b);
  b.event(event::ProcessClassified{kOffline, "offline", {}});  // closed its queues
  b.complete();  // its queues were suspended all the same
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 1) << "the daemon resumes what it suspended";
  b.settle();
  EXPECT_TRUE(b.tally().suspended_since.empty());
  b.expect_consistent();
}

TEST(Runtime, ASuspensionEndedByTheExitIsCountedOnceEverywhere) {
  Books b;
  begin_request(b);
  b.complete();
  b.exit(kOffline);
  b.settle();
  EXPECT_EQ(b.tally().suspensions, 1u);
  EXPECT_EQ(b.decided[kOffline]["exit"], 1);
  EXPECT_TRUE(b.tally().suspended_since.empty());
  b.expect_consistent();
}

TEST(Runtime, APidTakenByANewProcessEndsTheOldOnesSuspension) {
  Books b;
  begin_request(b);
  b.complete();
  ASSERT_EQ(b.tally().suspended_since.count(kOffline), 1u);
  // No exit was seen: the next event names a new process under the same pid.
  b.live.erase(kOffline);
  ++b.decided[kOffline]["exit"];
  b.suspended[kOffline] = false;
  const ProcessKey successor{kOffline.pid, kOffline.start_time_ticks + 1};
  b.appear(successor, "offline");
  EXPECT_EQ(b.tally().suspended_since.count(kOffline), 0u) << "its queues went with it";
  EXPECT_EQ(b.tally().by_process.count(kOffline), 0u);
  EXPECT_GT(b.tally().suspended_total.count(), 0) << "its suspension is booked as ended";
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 0) << "a gone process is not resumed";
  // The registry holds the newcomer alone under the pid, and the driver was told the old one left.
  EXPECT_FALSE(b.runtime.processes().knows(kOffline));
  ASSERT_NE(b.runtime.processes().with_pid(kOffline.pid), nullptr);
  EXPECT_EQ(b.runtime.processes().with_pid(kOffline.pid)->key, successor);
  EXPECT_EQ(b.left, std::vector<ProcessKey>{kOffline});
  b.settle();
  b.expect_consistent();
}

// The snapshot every status document, metrics page and evaluation row renders: an ongoing
// suspension counts up to the instant, under the class it began in; requests per GPU, class and
// live process; a process that leaves leaves the per-process figures, not its class's.
TEST(Runtime, TheSnapshotCountsOngoingSuspensionsAndTheRequestsItSaw) {
  Books b;
  begin_request(b);
  b.complete();
  const Time suspended_at = b.t;  // the answer's time
  b.t += 5ms;
  RuntimeSnapshot f = b.runtime.snapshot(b.t);
  ASSERT_EQ(f.gpus.count(kGpu), 1u);
  const RuntimeSnapshot::Gpu& g = f.gpus.at(kGpu);
  EXPECT_EQ(f.at, b.t);
  EXPECT_EQ(g.suspensions, 1u);
  EXPECT_EQ(g.suspended, b.t - suspended_at);
  EXPECT_EQ(g.suspended_now, std::vector<ProcessKey>{kOffline});
  EXPECT_EQ(g.by_class.at("offline").suspended, b.t - suspended_at);
  EXPECT_EQ(g.by_process.at(kOffline).suspended, b.t - suspended_at);
  EXPECT_EQ(g.actions.suspend_actions, 1u);
  EXPECT_EQ(f.suspensions(), 1u);
  EXPECT_EQ(f.suspended(), b.t - suspended_at);

  b.event(event::RequestFinished{kOnline, 1, RequestSource::kHint});
  f = b.runtime.snapshot(b.t);
  const GpuRequests& r = f.gpus.at(kGpu).requests;
  EXPECT_EQ(r.latency.count(), 1u);
  EXPECT_EQ(r.by_class.at("online"), 1u);
  EXPECT_EQ(r.by_process.at(kOnline), 1u);
  EXPECT_EQ(f.classes.at("online").request_latency.count(), 1u);

  b.settle();  // the idle resume, once its hysteresis runs out
  b.t += 1s;
  if (b.timer) b.event(event::TimerFired{});
  b.settle();
  b.exit(kOnline);
  b.exit(kOffline);
  f = b.runtime.snapshot(b.t + 1s);
  const RuntimeSnapshot::Gpu& after = f.gpus.at(kGpu);
  EXPECT_TRUE(after.suspended_now.empty());
  EXPECT_EQ(after.suspended, after.by_class.at("offline").suspended) << "nothing counts on";
  EXPECT_EQ(f.suspended(), b.runtime.snapshot(b.t + 2s).suspended());
  EXPECT_TRUE(after.by_process.empty()) << "processes that left";
  EXPECT_TRUE(after.requests.by_process.empty());
  EXPECT_EQ(after.requests.by_class.at("online"), 1u) << "a class keeps its count";
}

TEST(Runtime, TheDriverHearsOfEachProcessThatLeavesOnce) {
  Books b;
  begin_request(b);
  b.event(event::ProcessExited{kOffline});
  b.event(event::ProcessExited{kOffline});  // again (a late report): nothing left to drop
  b.event(event::ProcessExited{ProcessKey{4321, 1}});  // never known
  EXPECT_EQ(b.left, std::vector<ProcessKey>{kOffline});
}

TEST(Runtime, TheAnswerToARecoveryResumeTouchesNoArbiter) {
  Books b;
  begin_request(b);
  b.event(event::ProcessClassified{kOffline, "offline", {}});
  b.complete();
  ASSERT_EQ(b.runtime.recoveries(), 1u);
  b.settle();
  EXPECT_EQ(b.runtime.scheduler().gpu(kGpu)->stats().stale_completions, 0u);
  EXPECT_TRUE(b.runtime.settled());
}

TEST(Runtime, ShutdownSettlesOnlyOnceEveryResumeIsAnswered) {
  Books b;
  begin_request(b);
  b.complete();
  b.event(event::Shutdown{});
  EXPECT_FALSE(b.runtime.settled()) << "the shutdown's resume is in flight";
  b.settle();
  EXPECT_TRUE(b.runtime.settled());
  b.expect_consistent();
}

TEST(Runtime, ShutdownDoesNotSettleWhileASuspendIsInFlight) {
  Books b;
  begin_request(b);  // the suspend is in flight: nothing is booked suspended yet
  b.event(event::Shutdown{});
  EXPECT_FALSE(b.runtime.settled()) << "its queues may be suspended when it is answered";
  b.settle();
  EXPECT_TRUE(b.runtime.settled());
  EXPECT_TRUE(b.tally().suspended_since.empty());
  b.expect_consistent();
}

TEST(Runtime, AnAnswerGivenTwiceOrForNoActionIsIgnored) {
  Books b;
  begin_request(b);
  const FakeActuator::Pending p = b.actuator.pending.front();
  b.complete();
  ASSERT_EQ(b.tally().suspensions, 1u);
  event::ActuationCompleted again{p.id, kGpu, {{kOffline, event::Outcome::kDone, 0}}};
  b.runtime.completed(b.t, again);
  event::ActuationCompleted unknown{987654, kGpu, {{kOffline, event::Outcome::kDone, 0}}};
  b.runtime.completed(b.t, unknown);
  EXPECT_EQ(b.tally().suspensions, 1u) << "booked once";
  EXPECT_EQ(b.runtime.scheduler().gpu(kGpu)->stats().stale_completions, 0u)
      << "the scheduler never saw them";
  b.expect_consistent();
}

// A port that answers from within suspend()/resume() breaks the contract; the Runtime still
// serves it as if the answer had come right after.
struct SynchronousActuator : ActuatorPort {
  Runtime* runtime = nullptr;
  Time now{0};
  std::vector<uint64_t> answered;
  void answer(uint64_t id, const std::vector<ProcessKey>& targets, GpuId gpu) {
    event::ActuationCompleted c{id, gpu, {}};
    for (const auto& k : targets) c.outcomes.push_back({k, event::Outcome::kDone, 0});
    answered.push_back(id);
    runtime->completed(now, c);
  }
  void suspend(Time t, const action::Suspend& a) override {
    now = t;
    answer(a.id, a.targets, a.gpu);
  }
  void resume(Time t, const action::Resume& a) override {
    now = t;
    answer(a.id, a.targets, a.gpu);
  }
};

TEST(Runtime, AnAnswerFromWithinTheActuatorIsServedAfterTheHandOver) {
  Config config = builtin_config();
  Classifier classifier{config.classes};
  SynchronousActuator port;
  std::vector<std::string> seen;
  Runtime runtime{classifier.classes(), config.policy,
                  {&port, [](std::optional<Time>) {},
                   [&](Time, const std::vector<Action>& as) {
                     for (const auto& a : as)
                       if (std::holds_alternative<action::Suspend>(a)) seen.push_back("suspend");
                     seen.push_back("batch end, in flight " + std::to_string(runtime.in_flight()));
                   },
                   {},
                   {}}};
  port.runtime = &runtime;
  Time t{1s};
  for (const auto& [key, cls] : {std::pair{kOnline, "online"}, std::pair{kOffline, "offline"}}) {
    runtime.dispatch(t, event::ProcessAppeared{key, {kGpu}});
    runtime.dispatch(t, event::ProcessClassified{key, cls, {kGpu}});
  }
  seen.clear();
  runtime.dispatch(t + 1ms, event::RequestStarted{kOnline, 1, RequestSource::kHint});
  ASSERT_EQ(port.answered.size(), 1u);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0], "suspend");
  EXPECT_EQ(seen[1], "batch end, in flight 1") << "the answer waited for the batch to be out";
  EXPECT_EQ(runtime.in_flight(), 0u);
  const GpuSuspensionTally* tally = runtime.suspensions().gpu(kGpu);
  ASSERT_NE(tally, nullptr);
  EXPECT_EQ(tally->suspended_since.count(kOffline), 1u);
}

TEST(Runtime, AReloadThatRemovesTheOfflineClassResumesItAndBooksItsTimeUnderItsClass) {
  Books b;
  begin_request(b);
  b.complete();
  ASSERT_EQ(b.tally().suspended_since.count(kOffline), 1u);
  std::vector<SchedClass> only_online;
  for (const auto& c : b.classifier.classes())
    if (c.name == "online") only_online.push_back(c);
  b.t += 5ms;
  b.runtime.reconfigure(b.t, only_online, b.config.policy);
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 1) << "no class: its queues are resumed";
  b.settle();
  EXPECT_TRUE(b.tally().suspended_since.empty());
  ASSERT_EQ(b.tally().by_class.count("offline"), 1u);
  EXPECT_GT(b.tally().by_class.at("offline").suspended.count(), 0)
      << "its suspended time stays with the class it was suspended under";
  EXPECT_EQ(b.tally().by_class.count(""), 0u);
}

}  // namespace
}  // namespace gpreempt::sched
