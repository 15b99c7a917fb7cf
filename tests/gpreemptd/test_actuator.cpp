// gpreemptd's Actuator with a context per GPU, over the fake KFD: each process is acted on by the
// control thread of the context that traces it (the one of the GPU it was first acted on for),
// and an action whose targets belong to two contexts completes once, whole, in the targets' order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "common/event_loop.h"
#include "core/fake_kfd.h"
#include "actuator.h"
#include "fixtures.h"
#include "preempt/context.h"

namespace {

namespace sched = gpreempt::sched;
namespace fs = std::filesystem;
using gpreempt::kfd::kfd_ioctl_dbg_trap_args;
using sched::event::Outcome;

constexpr sched::GpuId kGpuA = 0x1001;
constexpr sched::GpuId kGpuB = 0x1002;

// Which thread issued each SUSPEND/RESUME_QUEUES, for which process.
class ThreadRecordingKfd final : public gpreempt::kfd::KfdDriver {
 public:
  explicit ThreadRecordingKfd(gpreempt::testing::FakeKfd& kfd) : kfd_(kfd) {}
  long get_version(gpreempt::kfd::Version& out) override { return kfd_.get_version(out); }
  std::string describe() const override { return kfd_.describe(); }
  long dbg_trap(kfd_ioctl_dbg_trap_args& a) override {
    if (a.op == gpreempt::kfd::KFD_IOC_DBG_TRAP_SUSPEND_QUEUES ||
        a.op == gpreempt::kfd::KFD_IOC_DBG_TRAP_RESUME_QUEUES) {
      std::lock_guard lock(mu);
      threads[static_cast<int>(a.pid)].insert(std::this_thread::get_id());
    }
    return kfd_.dbg_trap(a);
  }
  std::mutex mu;
  std::map<int, std::set<std::thread::id>> threads;

 private:
  gpreempt::testing::FakeKfd& kfd_;
};

class TwoContextRig {
 public:
  TwoContextRig() : driver_(kfd) {
    proc_root_ = fs::temp_directory_path() / ("gpreemptd-actuator-" + std::to_string(::getpid()));
    fs::remove_all(proc_root_);
    for (auto [key, gpus] : {std::pair{p, std::vector{kGpuA, kGpuB}}, std::pair{q, std::vector{kGpuB}}}) {
      gpreempt::testing::write_proc_stat(proc_root_, key.pid, key.start_time_ticks);
      for (auto g : gpus) {
        kfd.create_queue(static_cast<uint32_t>(key.pid));
        std::lock_guard lock(kfd.mu);
        kfd.proc(static_cast<uint32_t>(key.pid)).queues.front().gpu_id = g;
      }
    }
    gpreempt::preempt::ContextOptions o;
    o.handle_signals = false;
    for (auto g : {kGpuA, kGpuB})
      contexts_[g] = std::make_unique<gpreempt::preempt::Context>(
          o, std::make_unique<gpreempt::testing::DriverRef>(driver_),
          std::make_unique<gpreempt::testing::TracerRef>(tracer_));
    actuator_ = std::make_unique<gpreemptd::Actuator>(
        loop_,
        std::map<sched::GpuId, gpreempt::preempt::Context*>{{kGpuA, contexts_[kGpuA].get()},
                                                            {kGpuB, contexts_[kGpuB].get()}},
        proc_root_.string(), std::map<sched::GpuId, uint32_t>{{kGpuA, 1500}, {kGpuB, 1500}},
        [this](gpreemptd::ActuationReport r) {
          reports.push_back(std::move(r));
          if (reports.size() >= expected_) loop_.stop();
        },
        [](const gpreempt::preempt::Notice&) {});
  }
  ~TwoContextRig() {
    contexts_.clear();
    actuator_.reset();
    fs::remove_all(proc_root_);
  }

  gpreemptd::Actuator& actuator() { return *actuator_; }
  // Runs the loop until `n` reports in all have come, and a little longer to catch extra ones.
  void run_until(std::size_t n) {
    expected_ = n;
    const auto guard = loop_.add_timer([&] { loop_.stop(); });
    loop_.arm_at(guard, std::chrono::steady_clock::now() + std::chrono::seconds(20));
    if (reports.size() < n) loop_.run();
    loop_.unwatch(guard);
    // Any report still on its way (a part delivered twice) is delivered before the next step.
    expected_ = n + 1;
    const auto settle = loop_.add_timer([&] { loop_.stop(); });
    loop_.arm_at(settle, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    loop_.run();
    loop_.unwatch(settle);
  }
  bool suspended(const sched::ProcessKey& key, sched::GpuId gpu) {
    std::lock_guard lock(kfd.mu);
    for (const auto& qu : kfd.proc(static_cast<uint32_t>(key.pid)).queues)
      if (qu.gpu_id == gpu) return qu.suspended;
    return false;
  }
  std::set<std::thread::id> threads_of(const sched::ProcessKey& key) {
    std::lock_guard lock(driver_.mu);
    return driver_.threads[key.pid];
  }

  const sched::ProcessKey p{101, 5001};  // on both GPUs
  const sched::ProcessKey q{102, 5002};  // on GPU B only
  gpreempt::testing::FakeKfd kfd;
  std::vector<gpreemptd::ActuationReport> reports;

 private:
  gpreempt::testing::FakeTracer tracer_;
  ThreadRecordingKfd driver_;
  fs::path proc_root_;
  gpreempt::EventLoop loop_;
  std::map<sched::GpuId, std::unique_ptr<gpreempt::preempt::Context>> contexts_;
  std::unique_ptr<gpreemptd::Actuator> actuator_;
  std::size_t expected_ = 1;
};

TEST(Actuator, AnActionOverTwoContextsCompletesOnceWholeWithEachProcessOnItsOwnTracer) {
  TwoContextRig rig;
  auto& act = rig.actuator();
  // p is first acted on for GPU A: GPU A's context traces it from now on.
  act.suspend({}, {.id = 1, .gpu = kGpuA, .targets = {rig.p}});
  rig.run_until(1);
  ASSERT_EQ(rig.reports.size(), 1u);
  EXPECT_TRUE(rig.suspended(rig.p, kGpuA));

  // GPU B's suspension of p and q: p's part on A's control thread, q's on B's.
  act.suspend({}, {.id = 2, .gpu = kGpuB, .targets = {rig.p, rig.q}});
  rig.run_until(2);
  ASSERT_EQ(rig.reports.size(), 2u) << "one completion for the action, not one per part";
  const auto& r = rig.reports[1].completed;
  EXPECT_EQ(r.action, 2u);
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ(r.outcomes[0].key, rig.p);
  EXPECT_EQ(r.outcomes[0].outcome, Outcome::kDone);
  EXPECT_EQ(r.outcomes[1].key, rig.q);
  EXPECT_EQ(r.outcomes[1].outcome, Outcome::kDone);
  EXPECT_EQ(rig.reports[1].ioctl_seconds.size(), 2u) << "both parts' ioctls";
  EXPECT_TRUE(rig.suspended(rig.p, kGpuB));
  EXPECT_TRUE(rig.suspended(rig.q, kGpuB));

  act.resume({}, {.id = 3, .gpu = kGpuB, .targets = {rig.p, rig.q}});
  act.resume({}, {.id = 4, .gpu = kGpuA, .targets = {rig.p}});
  rig.run_until(4);
  EXPECT_EQ(rig.reports.size(), 4u);
  EXPECT_EQ(act.in_flight(), 0);
  EXPECT_FALSE(rig.suspended(rig.p, kGpuA));
  EXPECT_FALSE(rig.suspended(rig.p, kGpuB));
  EXPECT_FALSE(rig.suspended(rig.q, kGpuB));

  // Every SUSPEND/RESUME of a process came from one thread (its tracer), and not the same one
  // for both processes.
  const auto tp = rig.threads_of(rig.p);
  const auto tq = rig.threads_of(rig.q);
  ASSERT_EQ(tp.size(), 1u);
  ASSERT_EQ(tq.size(), 1u);
  EXPECT_NE(*tp.begin(), *tq.begin());
}

}  // namespace
