// The actuator port's contract (lib/sched/actuator_port.h), checked of every implementation: the
// daemon's (gpreemptd/actuator.h, over the core on the fake KFD), the DES's (eval/des/actuator.h,
// over the GPU model) and the tests' fake (tests/support/fake_actuator.h).
//   * suspend() and resume() return before any answer;
//   * every action is answered exactly once, with its id and GPU and one outcome per target in
//     the targets' order;
//   * the targets are acted on on the action's GPU only;
//   * a target that exited is answered kGone, never kDone.
// One world for all: GPUs A and B; process p with a queue on each, process q with one on B.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include "common/event_loop.h"
#include "core/fake_kfd.h"
#include "eval/des/actuator.h"
#include "gpreemptd/actuator.h"
#include "preempt/context.h"
#include "sim/gpu/engine.h"
#include "sim/gpu/profile.h"
#include "support/fixtures.h"
#include "support/fake_actuator.h"

namespace {

namespace sched = gpreempt::sched;
namespace fs = std::filesystem;
using sched::event::ActuationCompleted;
using sched::event::Outcome;
using gpreempt::sim::gpu::SimTime;

constexpr sched::GpuId kGpuA = 0x1001;
constexpr sched::GpuId kGpuB = 0x1002;
const sched::ProcessKey kP{101, 5001};  // on A and B
const sched::ProcessKey kQ{102, 5002};  // on B
const std::vector<std::pair<sched::ProcessKey, std::vector<sched::GpuId>>> kWorld{
    {kP, {kGpuA, kGpuB}}, {kQ, {kGpuB}}};

// An implementation of the port in its world.
class Rig {
 public:
  virtual ~Rig() = default;
  virtual sched::ActuatorPort& port() = 0;
  // Lets the world run until `n` answers in all have come, and on until nothing more is due (an
  // answer given twice shows).
  virtual void run_until(std::size_t n) = 0;
  // Whether the process's queues on `gpu` are out of the device's runlist now.
  virtual bool suspended(const sched::ProcessKey& key, sched::GpuId gpu) = 0;
  virtual void exit(const sched::ProcessKey& key) = 0;
  std::vector<ActuationCompleted> answers;
};

// ---- the tests' fake ------------------------------------------------------------------------

class FakeRig final : public Rig {
 public:
  sched::ActuatorPort& port() override { return fake_; }
  void run_until(std::size_t) override { fake_.answer_all(); }
  bool suspended(const sched::ProcessKey& key, sched::GpuId gpu) override {
    return fake_.is_suspended(key, gpu);
  }
  void exit(const sched::ProcessKey& key) override { fake_.exit(key); }

 private:
  gpreempt::testing::FakeActuator fake_{[this](const ActuationCompleted& c) { answers.push_back(c); }};
};

// ---- the DES's actuator over the GPU model --------------------------------------------------

class DesRig final : public Rig {
 public:
  DesRig() {
    const auto profile = gpreempt::sim::gpu::mi308x_profile();
    std::vector<gpreempt::sim::gpu::GpuEngine*> raw;
    for (auto g : {kGpuA, kGpuB}) {
      gpreempt::sim::gpu::EngineOptions eo;
      eo.remap_on_queue_change = false;
      engines_.push_back(std::make_unique<gpreempt::sim::gpu::GpuEngine>(profile, g, eo));
      raw.push_back(engines_.back().get());
    }
    actuator_.emplace(
        raw, std::vector<sched::GpuId>{kGpuA, kGpuB}, profile.clock_mhz, 1000,
        [this](SimTime delay, std::function<void()> fn) {
          queue_.emplace(std::make_pair(now_ + delay, seq_++), std::move(fn));
        },
        [this](const ActuationCompleted& c) { answers.push_back(c); });
    uint32_t id = 0;
    for (const auto& [key, gpus] : kWorld)
      for (auto gpu : gpus) {
        const gpreempt::sim::gpu::QueueKey q{key.pid, id++};
        engines_[index(gpu)]->add_queue(q, 7, false);
        actuator_->add_queues(key, index(gpu), {q});
        queues_[{key, gpu}] = q;
      }
  }
  sched::ActuatorPort& port() override { return *actuator_; }
  void run_until(std::size_t) override {
    for (;;) {
      SimTime t = std::numeric_limits<SimTime>::max();
      if (!queue_.empty()) t = queue_.begin()->first.first;
      for (auto& e : engines_)
        if (auto te = e->next_event_time()) t = std::min(t, *te);
      if (t == std::numeric_limits<SimTime>::max()) return;  // nothing more is due
      now_ = std::max(now_, t);
      for (auto& e : engines_) e->advance_to(now_);
      while (!queue_.empty() && queue_.begin()->first.first <= now_) {
        auto fn = std::move(queue_.begin()->second);
        queue_.erase(queue_.begin());
        fn();
      }
    }
  }
  bool suspended(const sched::ProcessKey& key, sched::GpuId gpu) override {
    auto st = engines_[index(gpu)]->queue_state(queues_.at({key, gpu}));
    return st && !st->runnable;
  }
  void exit(const sched::ProcessKey& key) override {
    actuator_->exited(key, now_);
    for (auto it = queues_.begin(); it != queues_.end();)
      if (it->first.first == key) {
        engines_[index(it->first.second)]->remove_queue(it->second);
        it = queues_.erase(it);
      } else {
        ++it;
      }
  }

 private:
  static uint32_t index(sched::GpuId gpu) { return gpu == kGpuA ? 0 : 1; }

  std::vector<std::unique_ptr<gpreempt::sim::gpu::GpuEngine>> engines_;
  std::optional<gpreempt::eval::des::SimActuator> actuator_;
  std::map<std::pair<SimTime, uint64_t>, std::function<void()>> queue_;
  std::map<std::pair<sched::ProcessKey, sched::GpuId>, gpreempt::sim::gpu::QueueKey> queues_;
  SimTime now_ = 0;
  uint64_t seq_ = 0;
};

// ---- the daemon's actuator over the core, on the fake KFD ------------------------------------

class DaemonRig final : public Rig {
 public:
  DaemonRig() {
    proc_root_ = fs::temp_directory_path() / ("gpreempt-contract-" + std::to_string(::getpid()));
    fs::remove_all(proc_root_);
    for (const auto& [key, gpus] : kWorld) {
      gpreempt::testing::write_proc_stat(proc_root_, key.pid, key.start_time_ticks);
      for (auto g : gpus) {
        kfd_.create_queue(static_cast<uint32_t>(key.pid));
        std::lock_guard lock(kfd_.mu);
        kfd_.proc(static_cast<uint32_t>(key.pid)).queues.front().gpu_id = g;
      }
    }
    gpreempt::preempt::ContextOptions o;
    o.handle_signals = false;
    std::map<sched::GpuId, gpreempt::preempt::Context*> contexts;
    for (auto g : {kGpuA, kGpuB}) {
      contexts_[g] = std::make_unique<gpreempt::preempt::Context>(
          o, std::make_unique<gpreempt::testing::DriverRef>(kfd_),
          std::make_unique<gpreempt::testing::TracerRef>(tracer_));
      contexts[g] = contexts_[g].get();
    }
    actuator_ = std::make_unique<gpreemptd::Actuator>(
        loop_, contexts, proc_root_.string(),
        std::map<sched::GpuId, uint32_t>{{kGpuA, 1500}, {kGpuB, 1500}},
        [this](gpreemptd::ActuationReport r) {
          answers.push_back(r.completed);
          if (answers.size() >= expected_) loop_.stop();
        },
        [](const gpreempt::preempt::Notice&) {});
  }
  ~DaemonRig() override {
    contexts_.clear();
    actuator_.reset();
    fs::remove_all(proc_root_);
  }
  sched::ActuatorPort& port() override { return *actuator_; }
  void run_until(std::size_t n) override {
    expected_ = n;
    const auto guard = loop_.add_timer([&] { loop_.stop(); });
    loop_.arm_at(guard, std::chrono::steady_clock::now() + std::chrono::seconds(20));
    if (answers.size() < n) loop_.run();
    loop_.unwatch(guard);
    // Until the actuator has nothing in flight: an answer given twice would come before that.
    expected_ = std::numeric_limits<std::size_t>::max();
    const auto settle = loop_.add_timer([&] {
      if (actuator_->in_flight() == 0) loop_.stop();
    });
    loop_.arm_at(settle, std::chrono::steady_clock::now());
    loop_.run();
    loop_.unwatch(settle);
  }
  bool suspended(const sched::ProcessKey& key, sched::GpuId gpu) override {
    std::lock_guard lock(kfd_.mu);
    for (const auto& q : kfd_.proc(static_cast<uint32_t>(key.pid)).queues)
      if (q.gpu_id == gpu) return q.suspended;
    return false;
  }
  void exit(const sched::ProcessKey& key) override {
    // The kernel forgets it, /proc no longer lists it, ptrace says so.
    {
      std::lock_guard lock(kfd_.mu);
      kfd_.proc(static_cast<uint32_t>(key.pid)).gone = true;
    }
    {
      std::lock_guard lock(tracer_.mu);
      tracer_.gone.insert(key.pid);
    }
    fs::remove_all(proc_root_ / std::to_string(key.pid));
  }

 private:
  gpreempt::testing::FakeKfd kfd_;
  gpreempt::testing::FakeTracer tracer_;
  fs::path proc_root_;
  gpreempt::EventLoop loop_;
  std::map<sched::GpuId, std::unique_ptr<gpreempt::preempt::Context>> contexts_;
  std::unique_ptr<gpreemptd::Actuator> actuator_;
  std::size_t expected_ = 1;
};

// ---- the contract ---------------------------------------------------------------------------

struct Implementation {
  const char* name;
  std::function<std::unique_ptr<Rig>()> make;
  friend void PrintTo(const Implementation& i, std::ostream* os) { *os << i.name; }
};

class ActuatorContract : public ::testing::TestWithParam<Implementation> {
 protected:
  std::unique_ptr<Rig> rig = GetParam().make();
};

sched::action::Suspend suspend(uint64_t id, sched::GpuId gpu, std::vector<sched::ProcessKey> t) {
  sched::action::Suspend s;
  s.id = id;
  s.gpu = gpu;
  s.targets = std::move(t);
  s.grace = std::chrono::microseconds(100);
  return s;
}

sched::action::Resume resume(uint64_t id, sched::GpuId gpu, std::vector<sched::ProcessKey> t) {
  sched::action::Resume r;
  r.id = id;
  r.gpu = gpu;
  r.targets = std::move(t);
  return r;
}

std::vector<sched::ProcessKey> keys(const ActuationCompleted& c) {
  std::vector<sched::ProcessKey> out;
  for (const auto& o : c.outcomes) out.push_back(o.key);
  return out;
}

TEST_P(ActuatorContract, ReturnsBeforeAnyAnswer) {
  rig->port().suspend(sched::Time{0}, suspend(1, kGpuB, {kQ}));
  EXPECT_TRUE(rig->answers.empty()) << "answered from within suspend()";
  rig->run_until(1);
  rig->port().resume(sched::Time{0}, resume(2, kGpuB, {kQ}));
  EXPECT_EQ(rig->answers.size(), 1u) << "answered from within resume()";
  rig->run_until(2);
  EXPECT_EQ(rig->answers.size(), 2u);
}

TEST_P(ActuatorContract, AnswersEveryActionOnceWithItsIdGpuAndTargetsInOrder) {
  rig->port().suspend(sched::Time{0}, suspend(7, kGpuB, {kQ, kP}));
  rig->run_until(1);
  rig->port().resume(sched::Time{0}, resume(8, kGpuB, {kQ, kP}));
  rig->run_until(2);
  ASSERT_EQ(rig->answers.size(), 2u) << "one answer per action";
  const std::vector<sched::ProcessKey> order{kQ, kP};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& a = rig->answers[i];
    EXPECT_EQ(a.action, 7u + i);
    EXPECT_EQ(a.gpu, kGpuB);
    EXPECT_EQ(keys(a), order) << "one outcome per target, in the targets' order";
    for (const auto& o : a.outcomes) EXPECT_EQ(o.outcome, Outcome::kDone);
  }
  EXPECT_FALSE(rig->suspended(kP, kGpuB));
  EXPECT_FALSE(rig->suspended(kQ, kGpuB));
}

TEST_P(ActuatorContract, ActsOnTheActionsGpuOnly) {
  rig->port().suspend(sched::Time{0}, suspend(1, kGpuA, {kP}));
  rig->run_until(1);
  EXPECT_TRUE(rig->suspended(kP, kGpuA));
  EXPECT_FALSE(rig->suspended(kP, kGpuB)) << "its queue on the other GPU is left alone";
  EXPECT_FALSE(rig->suspended(kQ, kGpuB));
  rig->port().resume(sched::Time{0}, resume(2, kGpuA, {kP}));
  rig->run_until(2);
  EXPECT_FALSE(rig->suspended(kP, kGpuA));
}

TEST_P(ActuatorContract, AnExitedTargetIsAnsweredGoneNeverDone) {
  rig->exit(kQ);
  rig->port().suspend(sched::Time{0}, suspend(1, kGpuB, {kP, kQ}));
  rig->run_until(1);
  ASSERT_EQ(rig->answers.size(), 1u);
  const auto& a = rig->answers[0];
  ASSERT_EQ(keys(a), (std::vector<sched::ProcessKey>{kP, kQ}));
  EXPECT_EQ(a.outcomes[0].outcome, Outcome::kDone);
  EXPECT_EQ(a.outcomes[1].outcome, Outcome::kGone);
  EXPECT_TRUE(rig->suspended(kP, kGpuB));
}

TEST_P(ActuatorContract, AResumeOfATargetThatExitedWhileSuspendedIsAnsweredGone) {
  rig->port().suspend(sched::Time{0}, suspend(1, kGpuB, {kP, kQ}));
  rig->run_until(1);
  ASSERT_TRUE(rig->suspended(kQ, kGpuB));
  rig->exit(kQ);
  rig->port().resume(sched::Time{0}, resume(2, kGpuB, {kP, kQ}));
  rig->run_until(2);
  ASSERT_EQ(rig->answers.size(), 2u);
  const auto& a = rig->answers[1];
  ASSERT_EQ(keys(a), (std::vector<sched::ProcessKey>{kP, kQ}));
  EXPECT_EQ(a.outcomes[0].outcome, Outcome::kDone);
  EXPECT_EQ(a.outcomes[1].outcome, Outcome::kGone);
  EXPECT_FALSE(rig->suspended(kP, kGpuB));
}

INSTANTIATE_TEST_SUITE_P(
    Implementations, ActuatorContract,
    ::testing::Values(Implementation{"Daemon", [] { return std::make_unique<DaemonRig>(); }},
                      Implementation{"Des", [] { return std::make_unique<DesRig>(); }},
                      Implementation{"Fake", [] { return std::make_unique<FakeRig>(); }}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
