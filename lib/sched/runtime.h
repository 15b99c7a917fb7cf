// The scheduling runtime gpreemptd and the discrete-event engine both drive
// (docs/architecture.md#layers): the Scheduler with the one process registry (process_registry.h:
// identity, pid reuse, class, GPUs, open requests, what discovery read), the book of what is
// really suspended (GpuSuspensions) and the actions in flight. A process that arrives under a pid
// a known one holds ends that one first, as if it had exited. It talks to two ports:
//   * an ActuatorPort (actuator_port.h) carries out its Suspend and Resume actions and answers
//     each through completed();
//   * a timer port (arm_timer) is asked for one timer; the driver answers it with dispatch of
//     event::TimerFired.
// The driver feeds every event it observes to dispatch(), and the transparent trigger's pointer
// samples to queues_sampled(): the Runtime's ActivityDetector turns those into the request and
// kernel-length events, so gpreemptd and the DES infer requests the same way from the same
// samples. After each event the Runtime resumes the
// orphans — processes whose queues are suspended on a GPU whose arbiter no longer has them — with
// the Scheduler's recovery actions, so no live process is ever left frozen and every suspension
// booked ends exactly once.
//
// What the Runtime does not own: where events and samples come from (discovery, the socket, the
// transparent trigger's pointer reads, the DES's clients) and how actions are performed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/activity_detector.h"
#include "sched/actuator_port.h"
#include "sched/gpu_suspensions.h"
#include "sched/request_tally.h"
#include "sched/runtime_snapshot.h"
#include "sched/scheduler.h"

namespace gpreempt::sched {

class Runtime {
 public:
  struct Ports {
    ActuatorPort* actuator = nullptr;
    // nullopt: disarm.
    std::function<void(std::optional<Time>)> arm_timer;
    // Sees what each call of the scheduler returned (possibly nothing), once it has been handed
    // to the actuator (so no log line sits on the path to the ioctl): the daemon's log and hint
    // timings, the DES's decision record. May be empty.
    std::function<void(Time, const std::vector<Action>&)> observe;
    // Sees each event just before the Scheduler does, the detector's included, in the order the
    // Scheduler gets them (the DES's record, which a test replays). May be empty.
    std::function<void(Time, const Event&)> inspect;
    // Each request that finished, as the Scheduler measured it (the Runtime's RequestTally books
    // it before): for what the driver keeps beside the snapshot (gpreemptd's Prometheus
    // histogram buckets). May be empty.
    std::function<void(Time, const RequestDone&)> request_done;
    // Each process that left the registry — it exited, or a newcomer took its pid — once the
    // Runtime has ended what it had (its suspensions, its open requests) and is settled: the
    // driver drops what it keeps of it (attachments, watches) and may call back into the Runtime.
    // May be empty.
    std::function<void(Time, const ProcessKey&)> process_left = {};
  };

  Runtime(std::vector<SchedClass> classes, ArbiterConfig config, Ports ports,
          ActivityDetectorConfig detector = {});
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // An event the driver observed at `now` (ActuationCompleted goes to completed()).
  void dispatch(Time now, const Event& e);
  // Trigger input: the read and write pointers of every queue `key` has, read at `now` (a queue
  // missing from `samples` is gone).
  void queues_sampled(Time now, const ProcessKey& key,
                      const std::vector<QueueActivitySample>& samples);
  // `key`'s queues are no longer read (unwatched, exited, unreadable): its open request ends.
  void queues_unwatched(Time now, const ProcessKey& key);
  // The actuator's answer to one of the actions the Runtime handed it.
  void completed(Time now, const event::ActuationCompleted& c);
  // A reloaded config (Scheduler::reconfigure).
  void reconfigure(Time now, std::vector<SchedClass> classes, ArbiterConfig config);

  // Every figure of what it did up to `now` (runtime_snapshot.h): what the status document, the
  // metrics and the evaluation's rows render.
  RuntimeSnapshot snapshot(Time now) const;

  const Scheduler& scheduler() const { return scheduler_; }
  // The one process registry (process_registry.h).
  const ProcessRegistry& processes() const { return scheduler_.processes(); }
  const GpuSuspensions& suspensions() const { return suspensions_; }
  const ActivityDetector& detector() const { return detector_; }
  // Actions handed to the actuator and not answered yet.
  std::size_t in_flight() const { return in_flight_.size(); }
  // Resumes of orphans issued so far.
  uint64_t recoveries() const { return recoveries_; }
  // Nothing in flight and nothing suspended: a shutdown may end.
  bool settled() const { return in_flight_.empty() && suspensions_.none_suspended(); }

 private:
  // The Scheduler's answer to `e`, performed.
  void decide(Time now, const Event& e);
  void perform(Time now, std::vector<Action> actions);
  void resume_orphans(Time now);
  // An answer the port gave from within suspend()/resume() (the contract forbids it; a port that
  // does is still served): kept until the actions being handed over are all out.
  void answer(Time now, const event::ActuationCompleted& c);

  Scheduler scheduler_;
  Ports ports_;
  GpuSuspensions suspensions_;
  RequestTally requests_;
  ActivityDetector detector_;
  std::map<uint64_t, bool> in_flight_;  // action id → whether it is a suspend
  uint64_t recoveries_ = 0;
  int performing_ = 0;  // perform() calls on the stack
  std::vector<std::pair<Time, event::ActuationCompleted>> early_answers_;
};

}  // namespace gpreempt::sched
