// The daemon's actuator port (sched::ActuatorPort): carries out the Runtime's Suspend/Resume
// actions through the C++ core (lib/preempt). Each
// target process is traced by one context, whose control thread is its ptrace tracer and issues
// every DBG_TRAP for it (the KFD takes DBG_TRAP only from a target's tracer). The daemon gives each
// GPU a context of its own, so a preemption in progress (or hanging until the preemption timeout)
// on one GPU does not hold back the suspensions of another: a process is traced by the context of
// the GPU it was first acted on for, for as long as it lives (a process on several GPUs still has
// one tracer). An action is posted to the control thread of each context its targets belong to and
// the loop thread returns at once; the completion comes back into the event loop through a
// LoopInbox as a sched::event::ActuationCompleted with one outcome per target, in the targets'
// order, once every part is done: done, gone (ESRCH: the process exited), timed_out (status bit
// 30: the preemption timed out on that GPU) or failed (errno).
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
#include "sched/actuator_port.h"
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

class Actuator final : public gpreempt::sched::ActuatorPort {
 public:
  using OnDone = std::function<void(ActuationReport)>;
  using OnNotice = std::function<void(const gpreempt::preempt::Notice&)>;

  // `contexts`: the context that traces the processes first acted on for each GPU (several GPUs
  // may share one; a GPU missing from it uses the first). Empty when no GPU can suspend here:
  // every action then completes with `failed` (ENODEV), which the arbiters never see in practice
  // since such GPUs never suspend. `clock_mhz`: each GPU's max_engine_clk_fcompute, for the grace
  // period's unit.
  Actuator(gpreempt::EventLoop& loop,
           const std::map<gpreempt::sched::GpuId, gpreempt::preempt::Context*>& contexts,
           std::string proc_root, std::map<gpreempt::sched::GpuId, uint32_t> clock_mhz,
           OnDone on_done, OnNotice on_notice);
  ~Actuator() override;
  Actuator(const Actuator&) = delete;
  Actuator& operator=(const Actuator&) = delete;

  // Returns at once; the answer comes through on_done on the loop thread (`now` is unused: the
  // control thread acts in real time).
  void suspend(gpreempt::sched::Time now, const gpreempt::sched::action::Suspend& a) override;
  void resume(gpreempt::sched::Time now, const gpreempt::sched::action::Resume& a) override;
  // Attach the process now (with the context of `gpu`, one of the GPUs it has queues on), so its
  // first suspend does not pay for it. Failures are logged; the suspend tries again and reports
  // them.
  void prepare(const gpreempt::sched::ProcessKey& key, gpreempt::sched::GpuId gpu);
  // The process has exited: the next process with its pid may be traced by any context.
  void forget(const gpreempt::sched::ProcessKey& key);
  // Actions posted and not completed yet.
  int in_flight() const { return in_flight_; }

 private:
  // One context and what its control thread knows.
  struct Lane {
    gpreempt::preempt::Context* context = nullptr;
    // This lane's control thread only: which process each attached pid is (a reused pid is
    // another process).
    std::map<int, gpreempt::sched::ProcessKey> attached;
  };
  struct Join;
  using TargetStep = std::function<gpreempt::sched::event::TargetOutcome(
      Lane&, const gpreempt::sched::ProcessKey&, ActuationReport&)>;

  // On the loop thread: the lane of `gpu` (the first one for a GPU it was not given).
  Lane& lane_of(gpreempt::sched::GpuId gpu);
  // On the loop thread: the lane that traces `key` (the lane of `gpu` the first time).
  Lane& lane_for(const gpreempt::sched::ProcessKey& key, gpreempt::sched::GpuId gpu);
  // Runs `step` for every target of the action on its lane's control thread.
  void act(uint64_t action, gpreempt::sched::GpuId gpu, bool suspend,
           const std::vector<gpreempt::sched::ProcessKey>& targets, TargetStep step);
  // On a control thread.
  void ensure_attached(Lane& lane, const gpreempt::sched::ProcessKey& key);
  gpreempt::sched::event::TargetOutcome suspend_one(Lane& lane,
                                                    const gpreempt::sched::ProcessKey& key,
                                                    gpreempt::sched::GpuId gpu, uint32_t grace,
                                                    ActuationReport& report);
  gpreempt::sched::event::TargetOutcome resume_one(Lane& lane,
                                                   const gpreempt::sched::ProcessKey& key,
                                                   gpreempt::sched::GpuId gpu,
                                                   ActuationReport& report);
  // The queues of `pid` on `gpu` the lane's context knows (a snapshot refreshes them).
  static std::vector<uint32_t> queues_on(const Lane& lane, int pid, gpreempt::sched::GpuId gpu);
  bool target_gone(int error, const gpreempt::sched::ProcessKey& key) const;
  static void record_ioctl(ActuationReport& report, uint64_t ioctl_ns);
  // Runs `job` on the lane's control thread, then hands its report (if any) to the loop thread
  // after the notices that thread's turn collected.
  void post(Lane& lane, std::function<std::optional<ActuationReport>()> job);
  // On the loop thread.
  void deliver(std::optional<ActuationReport> report,
               const std::vector<gpreempt::preempt::Notice>& notices);

  gpreempt::EventLoop& loop_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::map<gpreempt::sched::GpuId, Lane*> lane_of_gpu_;
  std::string proc_root_;
  std::map<gpreempt::sched::GpuId, uint32_t> clock_mhz_;
  OnDone on_done_;
  OnNotice on_notice_;
  gpreempt::LoopInbox inbox_;  // control threads -> loop thread
  gpreempt::EventLoop::Id notice_timer_ = 0;
  int in_flight_ = 0;
  // Loop thread only: the lane tracing each live process the actuator has acted on.
  std::map<int, std::pair<gpreempt::sched::ProcessKey, Lane*>> owner_;
};

}  // namespace gpreemptd
