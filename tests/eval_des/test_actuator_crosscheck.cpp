// The daemon's actuator and the DES's actuator carry out the same decisions (issue 15): one
// recorded event trace (tests/eval_des/traces/actuators.trace) is replayed through lib/sched's
// Runtime twice — once with gpreemptd's Actuator over the core (lib/preempt) on a fake KFD,
// once with eval/des's SimActuator over the GPU model — and the two runs must agree on
//   * every SUSPEND/RESUME_QUEUES issued: at which trace time, to which process, which of its
//     queues on which GPU, with which grace period (in the kernel's unit);
//   * every answer (per target: done / timed_out / failed) and so every later decision;
//   * which queues are suspended on the device between trace items;
//   * what the Runtime booked: suspensions and suspended time per GPU and class.
// A difference is the first line where the two logs part.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "common/event_loop.h"
#include "core/fake_kfd.h"
#include "eval/des/actuator.h"
#include "eval_des/actuator_trace.h"
#include "gpreemptd/actuator.h"
#include "preempt/context.h"
#include "sim/gpu/engine.h"
#include "sim/gpu/profile.h"
#include "support/fixtures.h"

namespace {

namespace sched = gpreempt::sched;
namespace fs = std::filesystem;
using gpreempt::testing::ActuatorRig;
using gpreempt::testing::ActuatorTrace;
using gpreempt::testing::Replayer;
using gpreempt::sim::gpu::SimTime;
using namespace gpreempt::kfd;

std::string trace_path() { return std::string(GPREEMPT_TEST_SOURCE_DIR) + "/tests/eval_des/traces/actuators.trace"; }

std::string call_line(sched::Time at, bool suspend, int pid, const std::set<sched::GpuId>& gpus,
                      std::vector<uint32_t> queues, uint32_t grace) {
  std::sort(queues.begin(), queues.end());
  std::string s = std::to_string(at.count()) + "ns call " + (suspend ? "SUSPEND" : "RESUME") +
                  " pid " + std::to_string(pid) + " gpu";
  for (auto g : gpus) s += " " + std::to_string(g);
  s += " queues";
  for (auto q : queues) s += " " + std::to_string(q);
  if (suspend) s += " grace " + std::to_string(grace);
  return s;
}

// Which queues are suspended, per live process and GPU, in one line.
std::string state_line(sched::Time at, const std::map<std::pair<int, sched::GpuId>, std::string>& q) {
  std::string s = std::to_string(at.count()) + "ns state";
  for (const auto& [k, v] : q) s += " " + std::to_string(k.first) + "/" + std::to_string(k.second) + ":" + v;
  return s;
}

// ---- the daemon's actuator -----------------------------------------------------------------

// The fake KFD as the core sees it, recording every SUSPEND/RESUME_QUEUES and failing the ones
// the trace's faults name.
class RecordingKfd final : public gpreempt::kfd::KfdDriver {
 public:
  RecordingKfd(gpreempt::testing::FakeKfd& kfd, const ActuatorTrace& trace, const std::atomic<int64_t>& now)
      : kfd_(kfd), trace_(trace), now_(now) {}
  long get_version(gpreempt::kfd::Version& out) override { return kfd_.get_version(out); }
  std::string describe() const override { return kfd_.describe(); }
  long dbg_trap(kfd_ioctl_dbg_trap_args& a) override {
    const bool suspend = a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES;
    if (!suspend && a.op != KFD_IOC_DBG_TRAP_RESUME_QUEUES) return kfd_.dbg_trap(a);
    const auto* ids = reinterpret_cast<const uint32_t*>(suspend ? a.suspend_queues.queue_array_ptr
                                                                : a.resume_queues.queue_array_ptr);
    const uint32_t n = suspend ? a.suspend_queues.num_queues : a.resume_queues.num_queues;
    std::vector<uint32_t> queues(ids, ids + n);
    std::set<sched::GpuId> gpus;
    {
      std::lock_guard lock(kfd_.mu);
      for (auto id : queues)
        for (const auto& q : kfd_.proc(a.pid).queues)
          if (q.id == id) gpus.insert(q.gpu_id);
    }
    std::lock_guard lock(mu);
    calls.push_back(call_line(sched::Time(now_.load()), suspend, static_cast<int>(a.pid), gpus, queues,
                              suspend ? a.suspend_queues.grace_period : 0));
    if (suspend && gpus.size() == 1) {
      const uint32_t nth = ++suspends_[*gpus.begin()];
      for (const auto& f : trace_.faults) {
        if (f.gpu != *gpus.begin() || f.nth != nth) continue;
        if (f.kind == "eio") return -EIO;
        std::lock_guard klock(kfd_.mu);
        kfd_.error_bit_next_suspend = true;  // status bit 30: the HWS preemption timed out
      }
    }
    return kfd_.dbg_trap(a);
  }
  std::mutex mu;
  std::vector<std::string> calls;

 private:
  gpreempt::testing::FakeKfd& kfd_;
  const ActuatorTrace& trace_;
  const std::atomic<int64_t>& now_;
  std::map<sched::GpuId, uint32_t> suspends_;
};

class DaemonTraceRig final : public ActuatorRig {
 public:
  explicit DaemonTraceRig(const ActuatorTrace& trace) : trace_(trace), driver_(kfd_, trace, now_ns_) {
    proc_root_ = fs::temp_directory_path() / ("gpreempt-crosscheck-" + std::to_string(::getpid()));
    fs::remove_all(proc_root_);
    for (const auto& p : trace.processes) {
      gpreempt::testing::write_proc_stat(proc_root_, p.key.pid, p.key.start_time_ticks);
      // Queue ids in declaration order, as the DES rig numbers them.
      for (const auto& [gpu, count] : p.queues)
        for (uint32_t i = 0; i < count; ++i) {
          kfd_.create_queue(static_cast<uint32_t>(p.key.pid));
          std::lock_guard lock(kfd_.mu);
          kfd_.proc(static_cast<uint32_t>(p.key.pid)).queues.front().gpu_id = gpu;
        }
    }
    gpreempt::preempt::ContextOptions o;
    o.handle_signals = false;
    ctx_ = std::make_unique<gpreempt::preempt::Context>(
        o, std::make_unique<gpreempt::testing::DriverRef>(driver_),
        std::make_unique<gpreempt::testing::TracerRef>(tracer_));
    std::map<sched::GpuId, uint32_t> clocks;
    std::map<sched::GpuId, gpreempt::preempt::Context*> contexts;
    for (auto g : trace.gpus) {
      clocks[g] = trace.clock_mhz;
      contexts[g] = ctx_.get();  // one fake KFD, one tracer: one context for every GPU
    }
    actuator_ = std::make_unique<gpreemptd::Actuator>(
        loop_, contexts, proc_root_.string(), clocks,
        [this](gpreemptd::ActuationReport r) {
          replayer_->completed(r.completed);
          if (replayer_->done()) loop_.stop();
        },
        [](const gpreempt::preempt::Notice&) {});
  }
  ~DaemonTraceRig() override {
    actuator_.reset();
    ctx_.reset();
    fs::remove_all(proc_root_);
  }

  std::vector<std::string> run() {
    Replayer replayer(trace_, *this);
    replayer_ = &replayer;
    const auto start = loop_.add_timer([&] {
      replayer.advance();
      if (replayer.done()) loop_.stop();
    });
    loop_.arm_at(start, std::chrono::steady_clock::now());
    const auto guard = loop_.add_timer([&] {
      ADD_FAILURE() << "the daemon's actuator left " << replayer.in_flight() << " actions unanswered at "
                    << replayer.now().count() << " ns";
      loop_.stop();
    });
    loop_.arm_at(guard, std::chrono::steady_clock::now() + std::chrono::seconds(60));
    loop_.run();
    replayer_ = nullptr;
    std::vector<std::string> out = replayer.log();
    std::lock_guard lock(driver_.mu);
    out.insert(out.end(), driver_.calls.begin(), driver_.calls.end());
    out.insert(out.end(), states_.begin(), states_.end());
    const auto books = replayer.accounting();
    out.insert(out.end(), books.begin(), books.end());
    return out;
  }

  void suspend(sched::Time now, const sched::action::Suspend& a) override {
    now_ns_ = now.count();
    actuator_->suspend(now, a);
  }
  void resume(sched::Time now, const sched::action::Resume& a) override {
    now_ns_ = now.count();
    actuator_->resume(now, a);
  }
  void observe(const sched::Event& e) override {
    const auto* x = std::get_if<sched::event::ProcessExited>(&e);
    if (!x) return;
    // The process is gone: the kernel forgets it, /proc no longer lists it, ptrace says so.
    exited_.insert(x->key.pid);
    {
      std::lock_guard lock(kfd_.mu);
      kfd_.proc(static_cast<uint32_t>(x->key.pid)).gone = true;
    }
    {
      std::lock_guard lock(tracer_.mu);
      tracer_.gone.insert(x->key.pid);
    }
    fs::remove_all(proc_root_ / std::to_string(x->key.pid));
  }
  void settled(sched::Time now) override {
    std::map<std::pair<int, sched::GpuId>, std::string> q;
    std::lock_guard lock(kfd_.mu);
    for (const auto& p : trace_.processes) {
      if (exited_.count(p.key.pid)) continue;
      auto& fp = kfd_.proc(static_cast<uint32_t>(p.key.pid));
      // Oldest first, as the queue ids run.
      for (auto it = fp.queues.rbegin(); it != fp.queues.rend(); ++it)
        q[{p.key.pid, it->gpu_id}] += it->suspended ? 'S' : 'r';
    }
    states_.push_back(state_line(now, q));
  }

 private:
  const ActuatorTrace& trace_;
  gpreempt::testing::FakeKfd kfd_;
  gpreempt::testing::FakeTracer tracer_;
  std::atomic<int64_t> now_ns_{0};
  RecordingKfd driver_;
  fs::path proc_root_;
  gpreempt::EventLoop loop_;
  std::unique_ptr<gpreempt::preempt::Context> ctx_;
  std::unique_ptr<gpreemptd::Actuator> actuator_;
  Replayer* replayer_ = nullptr;
  std::set<int> exited_;
  std::vector<std::string> states_;
};

// ---- the DES's actuator --------------------------------------------------------------------

class DesTraceRig final : public ActuatorRig {
 public:
  explicit DesTraceRig(const ActuatorTrace& trace) : trace_(trace) {
    auto profile = gpreempt::sim::gpu::mi308x_profile();
    profile.clock_mhz = trace.clock_mhz;
    std::vector<gpreempt::sim::gpu::GpuEngine*> raw;
    for (std::size_t g = 0; g < trace.gpus.size(); ++g) {
      gpreempt::sim::gpu::EngineOptions eo;
      eo.remap_on_queue_change = false;
      // The engine counts SUSPEND-type updates per GPU, as the fake KFD's faults do.
      std::string plan;
      for (const auto& f : trace.faults)
        if (f.gpu == trace.gpus[g]) plan += (plan.empty() ? "" : ",") + f.kind + "@" + std::to_string(f.nth);
      if (!plan.empty()) eo.faults = *gpreempt::sim::gpu::parse_fault_plan(plan);
      engines_.push_back(std::make_unique<gpreempt::sim::gpu::GpuEngine>(profile, trace.gpus[g], eo));
      raw.push_back(engines_.back().get());
    }
    actuator_.emplace(
        raw, trace.gpus, trace.clock_mhz, 0,
        [this](SimTime delay, std::function<void()> fn) { queue_.emplace(std::make_pair(now_ + delay, seq_++), std::move(fn)); },
        [this](const sched::event::ActuationCompleted& c) { replayer_->completed(c); });
    actuator_->set_call_observer([this](const gpreempt::eval::des::SimActuator::Call& c) {
      std::vector<uint32_t> ids;
      for (const auto& q : c.queues) ids.push_back(q.queue_id);
      // The trace time of the action this call carries out, plus however late the actuator is.
      const sched::Time at = issued_at_ + sched::Time(c.at - issued_sim_);
      calls_.push_back(call_line(at, c.suspend, c.key.pid, {trace_.gpus.at(c.gpu)}, ids, c.grace_units));
    });
    for (const auto& p : trace.processes) {
      uint32_t id = 0;
      std::map<uint32_t, std::vector<gpreempt::sim::gpu::QueueKey>> per_gpu;
      for (const auto& [gpu, count] : p.queues)
        for (uint32_t i = 0; i < count; ++i) {
          const gpreempt::sim::gpu::QueueKey k{p.key.pid, id++};
          const uint32_t g = index(gpu);
          engines_[g]->add_queue(k, 7, false);
          per_gpu[g].push_back(k);
        }
      for (auto& [g, keys] : per_gpu) actuator_->add_queues(p.key, g, keys);
    }
  }

  std::vector<std::string> run() {
    Replayer replayer(trace_, *this);
    replayer_ = &replayer;
    replayer.advance();
    while (!replayer.done()) {
      SimTime t = std::numeric_limits<SimTime>::max();
      if (!queue_.empty()) t = queue_.begin()->first.first;
      for (auto& e : engines_)
        if (auto te = e->next_event_time()) t = std::min(t, *te);
      if (t == std::numeric_limits<SimTime>::max()) {
        ADD_FAILURE() << "the DES's actuator left " << replayer.in_flight() << " actions unanswered at "
                      << replayer.now().count() << " ns";
        break;
      }
      now_ = std::max(now_, t);
      for (auto& e : engines_) e->advance_to(now_);
      while (!queue_.empty() && queue_.begin()->first.first <= now_) {
        auto fn = std::move(queue_.begin()->second);
        queue_.erase(queue_.begin());
        fn();
      }
    }
    replayer_ = nullptr;
    std::vector<std::string> out = replayer.log();
    out.insert(out.end(), calls_.begin(), calls_.end());
    out.insert(out.end(), states_.begin(), states_.end());
    const auto books = replayer.accounting();
    out.insert(out.end(), books.begin(), books.end());
    return out;
  }

  void suspend(sched::Time now, const sched::action::Suspend& a) override {
    sync(now);
    actuator_->suspend(sched::Time(now_), a);
  }
  void resume(sched::Time now, const sched::action::Resume& a) override {
    sync(now);
    actuator_->resume(sched::Time(now_), a);
  }
  void observe(const sched::Event& e) override {
    if (const auto* x = std::get_if<sched::event::ProcessExited>(&e)) {
      exited_.insert(x->key.pid);
      actuator_->exited(x->key, now_);
    }
  }
  void settled(sched::Time now) override {
    std::map<std::pair<int, sched::GpuId>, std::string> q;
    for (const auto& p : trace_.processes) {
      if (exited_.count(p.key.pid)) continue;
      uint32_t id = 0;
      for (const auto& [gpu, count] : p.queues)
        for (uint32_t i = 0; i < count; ++i) {
          auto st = engines_[index(gpu)]->queue_state({p.key.pid, id++});
          q[{p.key.pid, gpu}] += st && !st->runnable ? 'S' : 'r';
        }
    }
    states_.push_back(state_line(now, q));
  }

 private:
  uint32_t index(sched::GpuId gpu) const {
    return static_cast<uint32_t>(std::find(trace_.gpus.begin(), trace_.gpus.end(), gpu) - trace_.gpus.begin());
  }
  // The model's time runs on as the trace's does, except that it may still be busy (a preemption
  // timeout lasts seconds): a call's time is the trace time of its action plus however late the
  // actuator issued it after being asked. Answers are fed back at their action's trace time, so a
  // recovery resume shares it.
  void sync(sched::Time now) {
    if (now > issued_at_) {
      const SimTime target = std::max(now_, issued_sim_ + (now - issued_at_).count());
      if (target > now_) {
        now_ = target;
        for (auto& e : engines_) e->advance_to(now_);
      }
    }
    issued_at_ = now;
    issued_sim_ = now_;
  }

  const ActuatorTrace& trace_;
  std::vector<std::unique_ptr<gpreempt::sim::gpu::GpuEngine>> engines_;
  std::optional<gpreempt::eval::des::SimActuator> actuator_;
  std::map<std::pair<SimTime, uint64_t>, std::function<void()>> queue_;
  uint64_t seq_ = 0;
  SimTime now_ = 0;
  sched::Time issued_at_{0};
  SimTime issued_sim_ = 0;
  Replayer* replayer_ = nullptr;
  std::set<int> exited_;
  std::vector<std::string> calls_, states_;
};

std::size_t count_with(const std::vector<std::string>& log, const std::string& what) {
  return static_cast<std::size_t>(
      std::count_if(log.begin(), log.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; }));
}

TEST(ActuatorCrossCheck, TheDaemonAndTheDesActuatorsCarryOutOneTraceIdentically) {
  const ActuatorTrace trace = gpreempt::testing::load_actuator_trace(trace_path());
  const std::vector<std::string> daemon = DaemonTraceRig(trace).run();
  const std::vector<std::string> des = DesTraceRig(trace).run();

  // The trace exercises what it claims to: both GPUs, several targets in one action, a grace
  // period from the estimator, a timeout answered by a recovery resume, a failed call, an exit.
  EXPECT_GE(count_with(daemon, "call SUSPEND"), 8u);
  EXPECT_GE(count_with(daemon, "call RESUME"), 8u);
  EXPECT_EQ(count_with(daemon, "=timed_out"), 1u);
  EXPECT_EQ(count_with(daemon, "=failed(5)"), 1u);
  EXPECT_GE(count_with(daemon, " recovery"), 2u);
  EXPECT_GE(count_with(daemon, "suspend #"), 6u);
  EXPECT_EQ(count_with(daemon, "class offline suspensions"), 1u) << "the books are compared too";

  const std::size_t n = std::min(daemon.size(), des.size());
  for (std::size_t i = 0; i < n; ++i)
    if (daemon[i] != des[i]) {
      ADD_FAILURE() << "the actuators part at line " << i << "\n  daemon: " << daemon[i] << "\n  des:    " << des[i];
      break;
    }
  EXPECT_EQ(daemon.size(), des.size());
  if (::testing::Test::HasFailure()) {
    std::string all;
    for (std::size_t i = 0; i < std::max(daemon.size(), des.size()); ++i)
      all += (i < daemon.size() ? daemon[i] : "-") + "   |   " + (i < des.size() ? des[i] : "-") + "\n";
    ADD_FAILURE() << "daemon | des:\n" << all;
  }
}

TEST(ActuatorCrossCheck, ABadTraceLineIsNamedWithItsFileAndLine) {
  const fs::path p = fs::temp_directory_path() / ("gpreempt-bad-trace-" + std::to_string(::getpid()));
  std::ofstream(p) << "clock 1500\ngpus 1\nprocess 5 1 1:1\n10 start 6 1\n";
  try {
    gpreempt::testing::load_actuator_trace(p.string());
    ADD_FAILURE() << "a trace naming an undeclared process was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string() + ":4: process 6 is not declared"), std::string::npos)
        << e.what();
  }
  fs::remove(p);
}

}  // namespace
