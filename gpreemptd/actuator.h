// Carries out the scheduler's Suspend/Resume actions through the C++ core (lib/preempt): one
// context, whose control thread is the targets' ptrace tracer and issues every DBG_TRAP. An action
// is posted to that thread and the loop thread returns at once; the completion comes back into the
// event loop through a LoopInbox as a sched::event::ActuationCompleted with one outcome per target:
// done, gone (ESRCH: the process exited), timed_out (status bit 30: the preemption timed out on
// that GPU) or failed (errno).
//
// A Suspend of GPU g suspends, for each target, only its queues on g (KFD's SUSPEND_QUEUES acts on
// one process, so that is one ioctl per target process), with the action's grace period converted
// into the kernel's unit at g's clock. Targets are attached (PTRACE_SEIZE + debug session) ahead
// of their first suspend when the daemon asks (prepare), so the attach stays off the request path.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "common/loop_inbox.h"
#include "preempt/context.h"
#include "sched/action.h"
#include "sched/event.h"

namespace gpreemptd {

struct ActuationReport {
  gpreempt::sched::event::ActuationCompleted completed;
  bool suspend = true;
  // The hops of the action's path, for the hint-to-SUSPEND breakdown: when the loop thread handed
  // it to the control thread, when the control thread started it, and when its first
  // SUSPEND/RESUME ioctl began (none when no ioctl was needed).
  std::chrono::steady_clock::time_point posted_at{};
  std::chrono::steady_clock::time_point started_at{};
  std::optional<std::chrono::steady_clock::time_point> first_ioctl_at;
  // How long each SUSPEND/RESUME ioctl of the action took, in seconds (the metrics' histogram).
  std::vector<double> ioctl_seconds;
};

class Actuator {
 public:
  using OnDone = std::function<void(ActuationReport)>;
  using OnNotice = std::function<void(const gpreempt::preempt::Notice&)>;

  // `context` may be null (no GPU can suspend here): every action then completes with `failed`
  // (ENODEV), which the arbiters never see in practice since such GPUs never suspend.
  // `clock_mhz`: each GPU's max_engine_clk_fcompute, for the grace period's unit.
  Actuator(gpreempt::EventLoop& loop, gpreempt::preempt::Context* context, std::string proc_root,
           std::map<gpreempt::sched::GpuId, uint32_t> clock_mhz, OnDone on_done,
           OnNotice on_notice);
  ~Actuator();
  Actuator(const Actuator&) = delete;
  Actuator& operator=(const Actuator&) = delete;

  void suspend(const gpreempt::sched::action::Suspend& a);
  void resume(const gpreempt::sched::action::Resume& a);
  // Attach the process now, so its first suspend does not pay for it. Failures are logged; the
  // suspend tries again and reports them.
  void prepare(const gpreempt::sched::ProcessKey& key);
  // Actions posted and not completed yet.
  int in_flight() const { return in_flight_; }

 private:
  struct Shared;
  // On the control thread.
  void ensure_attached(const gpreempt::sched::ProcessKey& key);
  gpreempt::sched::event::TargetOutcome suspend_one(const gpreempt::sched::ProcessKey& key,
                                                    gpreempt::sched::GpuId gpu, uint32_t grace,
                                                    ActuationReport& report);
  gpreempt::sched::event::TargetOutcome resume_one(const gpreempt::sched::ProcessKey& key,
                                                   gpreempt::sched::GpuId gpu,
                                                   ActuationReport& report);
  // The queues of `pid` on `gpu` the core knows (a snapshot refreshes them).
  std::vector<uint32_t> queues_on(int pid, gpreempt::sched::GpuId gpu) const;
  bool target_gone(int error, const gpreempt::sched::ProcessKey& key) const;
  static void record_ioctl(ActuationReport& report, uint64_t ioctl_ns);
  void post(std::function<ActuationReport()> job);
  // On the loop thread: the notices the job's control-thread turn collected, then its report.
  void deliver(ActuationReport report, const std::vector<gpreempt::preempt::Notice>& notices);

  gpreempt::EventLoop& loop_;
  gpreempt::preempt::Context* context_;
  std::string proc_root_;
  std::map<gpreempt::sched::GpuId, uint32_t> clock_mhz_;
  OnDone on_done_;
  OnNotice on_notice_;
  gpreempt::LoopInbox inbox_;  // control thread -> loop thread
  gpreempt::EventLoop::Id notice_timer_ = 0;
  int in_flight_ = 0;
  // Control thread only: which process each attached pid is (a reused pid is another process).
  std::map<int, gpreempt::sched::ProcessKey> attached_;
};

}  // namespace gpreemptd
