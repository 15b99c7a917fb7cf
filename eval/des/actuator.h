// The DES's actuator port (sched::ActuatorPort): performs the Runtime's Suspend/Resume on the
// simulated GPUs and answers each later in simulated time, as the daemon's actuator answers
// through the control thread.
//
// As on a real node, KFD's SUSPEND_QUEUES/RESUME_QUEUES act on one process (its debug session),
// so an action with several targets is one ioctl per target, and each ioctl is one whole-device
// runlist update of the GPU model (sim/gpu engine: HWS unmap latency, grace period, CWSR save of
// the waves still resident, map latency and restore). The updates are serialised as KFD
// serialises them under the device lock. A target's outcome is `done`, or `timed_out` when the
// update failed with -ETIME (the model's preemption timeout, status bit 30), or `failed` (-EIO).
// The completion is delivered once every target of the action has its answer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/action.h"
#include "sched/actuator_port.h"
#include "sched/event.h"
#include "sim/gpu/engine.h"

namespace gpreempt::eval::des {

// A target's queues on one GPU left out of the runlist, from `start` (the update that stopped them
// returned) to `end` (the update that mapped them again returned).
struct SuspendedWindow {
  uint32_t gpu = 0;  // index
  sched::ProcessKey key;
  sim::gpu::SimTime start = 0;
  sim::gpu::SimTime end = 0;
};

class SimActuator final : public sched::ActuatorPort {
 public:
  using Post = std::function<void(sim::gpu::SimTime delay, std::function<void()>)>;
  using Complete = std::function<void(const sched::event::ActuationCompleted&)>;
  // One SUSPEND/RESUME_QUEUES as issued to a GPU model: what the daemon's actuator would pass to
  // the ioctl (the cross-engine test, tests/eval_des/test_actuator_crosscheck.cpp, compares the
  // two streams).
  struct Call {
    sim::gpu::SimTime at = 0;
    uint32_t gpu = 0;  // index
    sched::ProcessKey key;
    bool suspend = true;
    uint32_t grace_units = 0;
    std::vector<sim::gpu::QueueKey> queues;  // the target's queues on that GPU
  };
  using CallObserver = std::function<void(const Call&)>;

  // `engines[i]` is GPU index i, whose KFD gpu_id is `gpu_ids[i]`. `post` runs a function later
  // in simulated time (the DES queue); `complete` delivers an answer to the Scheduler.
  SimActuator(std::vector<sim::gpu::GpuEngine*> engines, std::vector<sched::GpuId> gpu_ids,
              uint32_t clock_mhz, sim::gpu::SimTime overhead_ns, Post post, Complete complete);

  // The queues of a process on GPU index `gpu`; all start runnable.
  void add_queues(const sched::ProcessKey& key, uint32_t gpu, std::vector<sim::gpu::QueueKey> queues);

  // `now` is the simulated time (ns); the answer is posted for later.
  void suspend(sched::Time now, const sched::action::Suspend& a) override;
  void resume(sched::Time now, const sched::action::Resume& a) override;

  // The process exited at `now`: its queues leave every GPU's runlist with it (their suspension
  // windows end there), and an action naming it later is answered kGone, as the kernel answers
  // ESRCH, without a runlist update.
  void exited(const sched::ProcessKey& key, sim::gpu::SimTime now);

  void set_call_observer(CallObserver observer) { observer_ = std::move(observer); }

  // Closes the windows still open at `end`.
  void finish(sim::gpu::SimTime end);

  uint64_t timeouts() const { return timeouts_; }
  uint64_t failures() const { return failures_; }
  // Each target's queues left out of the runlist, as its ioctls returned: the timeline's picture
  // (what the scheduler did is counted by the Runtime: RuntimeSnapshot).
  const std::vector<SuspendedWindow>& windows() const { return windows_; }

 private:
  struct Pending {
    // One outcome per target in the targets' order, filled as the updates return (a gone target
    // is answered before them).
    sched::event::ActuationCompleted answer;
    std::size_t left = 0;
  };
  uint32_t gpu_index(sched::GpuId id) const;
  void run(uint64_t id, uint32_t gpu, const std::vector<sched::ProcessKey>& targets, bool suspend,
           sched::Duration grace);
  void answered(uint64_t id, uint32_t gpu, const sched::ProcessKey& key, bool suspend, int result);

  std::vector<sim::gpu::GpuEngine*> engines_;
  std::vector<sched::GpuId> gpu_ids_;
  uint32_t clock_mhz_;
  sim::gpu::SimTime overhead_ns_;
  Post post_;
  Complete complete_;
  CallObserver observer_;
  std::vector<std::map<sched::ProcessKey, std::vector<sim::gpu::QueueKey>>> queues_;  // per GPU
  std::vector<std::set<sim::gpu::QueueKey>> runnable_;                                // per GPU
  std::map<uint64_t, Pending> pending_;
  std::map<std::pair<uint32_t, sched::ProcessKey>, sim::gpu::SimTime> open_;  // suspended since
  std::vector<SuspendedWindow> windows_;
  std::set<sched::ProcessKey> gone_;
  uint64_t timeouts_ = 0, failures_ = 0;
};

}  // namespace gpreempt::eval::des
