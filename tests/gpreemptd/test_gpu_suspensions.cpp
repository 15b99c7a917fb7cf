// The daemon's suspension books against the scheduler's, through the orders of events the soak
// met: a completion that arrives after its target exited, or after it closed its queues while its
// resume was in flight. A real sched::Scheduler decides; this driver plays the daemon's part
// (Daemon::perform, on_actuation, resume_orphans, on_tracker_event) around the suspensions, holding
// each action "in flight" until the test completes it.
#include "gpu_suspensions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

#include "sched/classifier.h"
#include "sched/config.h"
#include "sched/scheduler.h"

namespace gpreemptd {
namespace {

namespace sched = gpreempt::sched;
using namespace std::chrono_literals;

constexpr sched::GpuId kGpu = 7;

struct Pending {
  bool suspend = true;
  bool internal = false;  // the daemon's own orphan resume
  uint64_t id = 0;
  std::vector<sched::ProcessKey> targets;
};

struct Books {
  sched::Config config = sched::builtin_config();
  sched::Classifier classifier{config.classes};
  sched::Scheduler scheduler{classifier.classes(), config.policy};
  std::map<sched::ProcessKey, std::string> live;  // key → class
  std::map<sched::GpuId, GpuRecord> gpus;
  GpuSuspensions suspensions{{
      [this](const sched::ProcessKey& k) { return live.count(k) != 0; },
      [this](sched::GpuId g, const sched::ProcessKey& k) {
        const sched::GpuArbiter* a = scheduler.gpu(g);
        return a && a->has(k);
      },
      [this](const sched::ProcessKey& k) {
        auto it = live.find(k);
        return it == live.end() ? std::string() : it->second;
      }}};
  sched::Time t{1s};
  std::deque<Pending> in_flight;
  uint64_t next_internal = 1ull << 63;
  // What the daemon's log would say, per process on kGpu (the soak's check).
  std::map<sched::ProcessKey, std::map<std::string, int>> decided;
  std::map<sched::ProcessKey, bool> suspended;

  void event(const sched::Event& e) {
    t += 1ms;
    for (auto& a : scheduler.on_event(t, e)) {
      if (auto* s = std::get_if<sched::action::Suspend>(&a)) {
        for (const auto& k : s->targets) {
          ++decided[k]["suspend"];
          suspended[k] = true;
        }
        suspensions.posted(s->gpu, s->targets);
        in_flight.push_back({true, false, s->id, s->targets});
      } else if (auto* r = std::get_if<sched::action::Resume>(&a)) {
        for (const auto& k : r->targets) {
          ++decided[k]["resume"];
          suspended[k] = false;
        }
        suspensions.posted(r->gpu, r->targets);
        in_flight.push_back({false, false, r->id, r->targets});
      }
    }
    resume_orphans();
  }
  void resume_orphans() {
    for (auto& [gpu, rec] : gpus) {
      auto orphans = suspensions.orphans(rec, gpu);
      if (orphans.empty()) continue;
      for (const auto& k : orphans) {
        ++decided[k]["orphan_resume"];
        suspended[k] = false;
      }
      suspensions.posted(gpu, orphans);
      in_flight.push_back({false, true, next_internal++, orphans});
    }
  }
  void appear(const sched::ProcessKey& k, const std::string& cls) {
    live[k] = cls;
    event(sched::event::ProcessAppeared{k, {kGpu}});
    event(sched::event::ProcessClassified{k, cls, {kGpu}});
  }
  void exit(const sched::ProcessKey& k) {
    live.erase(k);
    if (suspended[k]) ++decided[k]["exit"];
    suspended[k] = false;
    suspensions.exited(gpus, k, t);
    event(sched::event::ProcessExited{k});
  }
  // Completes the oldest action in flight, every target done.
  Pending complete() {
    Pending p = in_flight.front();
    in_flight.pop_front();
    sched::event::ActuationCompleted c{p.id, kGpu, {}};
    for (const auto& k : p.targets) c.outcomes.push_back({k, sched::event::Outcome::kDone, 0});
    t += 1ms;
    suspensions.completed(gpus[kGpu], c, p.suspend, t);
    if (p.internal)
      resume_orphans();
    else
      event(c);
    return p;
  }
  void settle() {
    while (!in_flight.empty()) complete();
  }

  // The soak's invariants.
  void expect_consistent() {
    uint64_t by_gpu = 0, by_class = 0;
    for (const auto& [g, rec] : gpus) by_gpu += rec.suspensions;
    for (const auto& [name, s] : scheduler.accounting().classes()) by_class += s.suspensions;
    EXPECT_EQ(by_gpu, by_class) << "suspensions summed over GPUs and over classes";
    for (auto& [k, c] : decided)
      EXPECT_EQ(c["suspend"], c["resume"] + c["orphan_resume"] + c["exit"] + (suspended[k] ? 1 : 0))
          << sched::to_string(k) << ": suspends decided == resumes + exits while suspended";
    for (const auto& [g, rec] : gpus)
      for (const auto& [k, since] : rec.suspended_since)
        EXPECT_TRUE(live.count(k)) << sched::to_string(k) << " exited but is booked suspended";
  }
};

const sched::ProcessKey kOnline{100, 1}, kOffline{200, 2};

// Suspends kOffline for a request of kOnline; the suspend is left in flight.
void begin_request(Books& b) {
  b.appear(kOnline, "online");
  b.appear(kOffline, "offline");
  b.event(sched::event::RequestStarted{kOnline, 1, sched::RequestSource::kHint});
  ASSERT_EQ(b.in_flight.size(), 1u);
  ASSERT_TRUE(b.in_flight.front().suspend);
  ASSERT_EQ(b.in_flight.front().targets, std::vector<sched::ProcessKey>{kOffline});
}

TEST(GpuSuspensions, ASuspendCompletingAfterItsProcessExitedBooksNothing) {
  Books b;
  begin_request(b);
  b.exit(kOffline);
  b.complete();  // done, but its process is gone
  b.settle();
  EXPECT_TRUE(b.gpus[kGpu].suspended_since.empty());
  EXPECT_EQ(b.gpus[kGpu].suspensions, 0u);
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 0) << "a gone process is not resumed";
  b.expect_consistent();
}

TEST(GpuSuspensions, AProcessClosingItsQueuesWhileItsResumeIsInFlightIsResumedOnce) {
  Books b;
  begin_request(b);
  b.complete();
  EXPECT_EQ(b.gpus[kGpu].suspensions, 1u);
  b.event(sched::event::RequestFinished{kOnline, 1, sched::RequestSource::kHint});
  for (int i = 0; i < 100 && b.in_flight.empty(); ++i) {  // the idle resume comes on a timer
    b.t += 10ms;
    b.event(sched::event::TimerFired{});
  }
  ASSERT_EQ(b.in_flight.size(), 1u);
  ASSERT_FALSE(b.in_flight.front().suspend) << "the scheduler's resume, in flight";
  // The offline process closes its queues meanwhile: the arbiter drops it.
  b.event(sched::event::ProcessClassified{kOffline, "offline", {}});
  EXPECT_TRUE(b.suspensions.in_flight(kGpu, kOffline));
  EXPECT_TRUE(b.suspensions.orphans(b.gpus[kGpu], kGpu).empty());
  b.settle();
  EXPECT_EQ(b.decided[kOffline]["resume"], 1);
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 0) << "one resume for one suspension";
  EXPECT_TRUE(b.gpus[kGpu].suspended_since.empty());
  b.expect_consistent();
}

TEST(GpuSuspensions, ASuspendCompletingAfterItsProcessLeftTheGpuIsResumedNotCounted) {
  Books b;
  begin_request(b);
  b.event(sched::event::ProcessClassified{kOffline, "offline", {}});  // closed its queues
  b.complete();  // its queues were suspended all the same
  EXPECT_EQ(b.decided[kOffline]["orphan_resume"], 1) << "the daemon resumes what it suspended";
  b.settle();
  EXPECT_TRUE(b.gpus[kGpu].suspended_since.empty());
  b.expect_consistent();
}

TEST(GpuSuspensions, ASuspensionEndedByTheExitIsCountedOnceEverywhere) {
  Books b;
  begin_request(b);
  b.complete();
  b.exit(kOffline);
  b.settle();
  EXPECT_EQ(b.gpus[kGpu].suspensions, 1u);
  EXPECT_EQ(b.decided[kOffline]["exit"], 1);
  EXPECT_TRUE(b.gpus[kGpu].suspended_since.empty());
  b.expect_consistent();
}

}  // namespace
}  // namespace gpreemptd
