// What the scheduler is told (events in). The driver — the daemon, a unit test, the discrete-event
// engine — turns what it observes into these and passes each with the time it happened to
// Scheduler::on_event. Actuation is asynchronous: a Suspend/Resume action is answered later by one
// ActuationCompleted carrying each target's outcome.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sched/process_description.h"
#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreempt::sched {

// How the daemon learnt of a request: a hint over the socket, the queue pointers of the process
// (transparent), or an operator command. A class lists the sources it accepts (config `trigger`).
enum class RequestSource { kHint, kTransparent, kOperator };
const char* to_string(RequestSource s);

namespace event {

// A request of `key` began / ended. `request` is unique among the open requests of that process
// (the latency of each one is accounted).
struct RequestStarted {
  ProcessKey key;
  uint64_t request = 0;
  RequestSource source = RequestSource::kHint;
};
struct RequestFinished {
  ProcessKey key;
  uint64_t request = 0;
  RequestSource source = RequestSource::kHint;
};
// An LLM request of `key` has produced `tokens` output tokens so far (>= 1); its first such event
// is its first token (TTFT), later ones tell its decode pace (Protection::kLate). `at_end`: the
// count its client gave with its `end`, sent just before its RequestFinished: it gives the TPOT's
// token count, never a first token (a request whose first token went unreported has no TTFT).
struct RequestProgress {
  ProcessKey key;
  uint64_t request = 0;
  uint64_t tokens = 1;
  bool at_end = false;
};
// "A request will start in about `in`": suspend early so the GPU is clear when it arrives.
struct RequestExpected {
  ProcessKey key;
  Duration in{0};
  RequestSource source = RequestSource::kHint;
};

// A GPU process was found (it opened /dev/kfd) on these GPUs; it has no class yet.
struct ProcessAppeared {
  ProcessKey key;
  std::vector<GpuId> gpus;
};
// Its class (nullopt: matched no rule, left alone) and the GPUs it uses now. Sent again when the
// set of GPUs, the class or what discovery read of it changes.
struct ProcessClassified {
  ProcessKey key;
  std::optional<std::string> class_name;
  std::vector<GpuId> gpus;
  ProcessDescription description = {};
};
struct ProcessExited {
  ProcessKey key;
};

// What the machine can do on one GPU. A GPU never described is assumed to support suspend.
struct GpuCapability {
  GpuId gpu = 0;
  bool can_suspend = true;
  std::string reason;  // why not (KFD < 1.13, no HWS, ...), shown in the PriorityOnly action
};

enum class Outcome {
  kDone,      // the target's queues on that GPU are suspended / running as asked
  kGone,      // the process exited (ESRCH): nothing to undo
  kFailed,    // the call failed (errno in `error`)
  kTimedOut,  // the preemption timed out on that GPU (status bit 30)
};
const char* to_string(Outcome o);

struct TargetOutcome {
  ProcessKey key;
  Outcome outcome = Outcome::kDone;
  int error = 0;  // positive errno for kFailed
};
// The answer to the action with this id (Suspend::id / Resume::id).
struct ActuationCompleted {
  uint64_t action = 0;
  GpuId gpu = 0;
  std::vector<TargetOutcome> outcomes;
};

// One kernel of `key` ran for `length` on `gpu` (from queue-pointer polling or the simulator):
// feeds the grace-period estimator.
struct KernelObserved {
  GpuId gpu = 0;
  ProcessKey key;
  Duration length{0};
};

// What an operator command names: every process of a class, or one process; on every GPU it uses,
// or only `gpu`. Exactly one of class_name / key is set. The targets are the classified processes
// that match when the command arrives (a process started later is not included).
struct OperatorTarget {
  std::optional<std::string> class_name;
  std::optional<ProcessKey> key;
  std::optional<GpuId> gpu;
};
// Keep the targets suspended until now + `duration` (then resume them unless a request still needs
// them suspended). max_suspension still bounds it; the starvation guard too unless the config's
// operator_overrides_guard. A second command for the same target replaces the end time.
struct OperatorSuspend {
  OperatorTarget target;
  Duration duration{0};
};
// End the operator suspension of the targets now. Suspensions a pending request needs remain.
struct OperatorResume {
  OperatorTarget target;
};

// The time asked for by the last ArmTimer action has come.
struct TimerFired {};

// Stop: resume everything that is suspended (daemon exit, signal).
struct Shutdown {};

}  // namespace event

using Event =
    std::variant<event::RequestStarted, event::RequestFinished, event::RequestProgress,
                 event::RequestExpected,
                 event::ProcessAppeared, event::ProcessClassified, event::ProcessExited,
                 event::GpuCapability, event::ActuationCompleted, event::KernelObserved,
                 event::OperatorSuspend, event::OperatorResume, event::TimerFired, event::Shutdown>;

}  // namespace gpreempt::sched
