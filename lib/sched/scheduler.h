// The brain of gpreemptd, as pure logic: events in, actions out (docs/architecture.md#layers).
// It keeps the
// process registry (keyed by ProcessKey, so a reused pid never inherits anything), routes each
// event to the arbiters of the GPUs concerned, accounts requests, and asks for one timer.
//
// The driver calls on_event(now, event) for everything it observes, performs the returned
// Suspend/Resume actions asynchronously (answering each with event::ActuationCompleted), and
// delivers event::TimerFired when the last ArmTimer asks. The same object runs in the daemon,
// in unit tests with a fake clock and in the discrete-event engine.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/accounting.h"
#include "sched/action.h"
#include "sched/arbiter_config.h"
#include "sched/event.h"
#include "sched/gpu_arbiter.h"
#include "sched/process_registry.h"
#include "sched/request_tokens.h"
#include "sched/sched_class.h"
#include "sched/slo_controller.h"

namespace gpreempt::sched {

class Scheduler {
 public:
  // Class names must be unique (the config loader checks).
  Scheduler(std::vector<SchedClass> classes, ArbiterConfig config);

  std::vector<Action> on_event(Time now, const Event& event);

  // A reloaded config: new classes and policy knobs. Processes keep their class by name; one
  // whose class no longer exists becomes unclassified (left alone, as after ProcessClassified with
  // no class) until the driver classifies it again. Decisions are taken again at once.
  std::vector<Action> reconfigure(Time now, std::vector<SchedClass> classes, ArbiterConfig config);

  // A Resume (reason kRecovery) of processes whose queues are suspended on `gpu` but whom its
  // arbiter no longer has (they closed their queues there, or lost their class): the suspension
  // must end all the same. Its answer, fed back like any other, touches no arbiter.
  std::vector<Action> recover(GpuId gpu, std::vector<ProcessKey> targets);

  const ArbiterConfig& config() const { return config_; }
  const Accounting& accounting() const { return accounting_; }
  // Each objective's state: the protection in force, since when and why.
  const SloController& objectives() const { return slo_; }
  // nullptr for a GPU no process has used yet.
  const GpuArbiter* gpu(GpuId id) const;
  std::vector<GpuId> gpus() const;
  const SchedClass* class_named(const std::string& name) const;
  // After event::Shutdown: every arbiter resumes what it holds and suspends nothing more; a
  // suspend answered after it was overtaken by the shutdown's resume and is not counted.
  bool stopped() const { return stopped_; }
  // Every process it knows (appeared, not exited, its pid not reused since).
  const ProcessRegistry& processes() const { return processes_; }
  bool knows(const ProcessKey& key) const { return processes_.knows(key); }
  // Its class (nullptr: unknown or unclassified).
  const SchedClass* class_of(const ProcessKey& key) const;
  // The GPUs it uses (empty: none, or unknown).
  std::vector<GpuId> gpus_of(const ProcessKey& key) const;
  // When request `request` of `key` began, while it is open here (begun from a source its class
  // accepts, not yet finished); nullopt otherwise.
  std::optional<Time> request_started(const ProcessKey& key, uint64_t request) const;

  // The (process, GPU) pairs an operator command for `target` applies to now: classified
  // processes of the class (or the one process), on every GPU they use or only target.gpu.
  struct OperatorPair {
    ProcessKey key;
    GpuId gpu = 0;
  };
  std::vector<OperatorPair> operator_targets(const event::OperatorTarget& target) const;

 private:
  GpuArbiter& arbiter(GpuId id);
  // Every arbiter decides; the timer is re-armed if its time changed.
  std::vector<Action> decide(Time now);
  // The record of `key`, which may be new; a live process its pid named until now is gone first
  // (the registry decides pid reuse).
  ProcessRecord& admit(const ProcessKey& key, Time now);
  void forget(const ProcessKey& key, Time now);
  void place(const ProcessKey& key, ProcessRecord& p, std::vector<GpuId> gpus, Time now);
  // The process if it is known and classified, and its class accepts `source`.
  ProcessRecord* requester(const ProcessKey& key, RequestSource source);

  void handle(Time now, const event::RequestStarted& e);
  void handle(Time now, const event::RequestFinished& e);
  void handle(Time now, const event::RequestProgress& e);
  // A measure of class `cls` for its objective: re-tells the arbiters when the protection moved.
  void record(const SchedClass& cls, Time now, Metric metric, std::optional<Duration> value);
  // Tells the process's arbiters when its first open request is late (a class whose objective is
  // keyed on tokens; request_tokens.h).
  void update_lateness(const ProcessKey& key, const ProcessRecord& p);
  void handle(Time now, const event::RequestExpected& e);
  void handle(Time now, const event::ProcessAppeared& e);
  void handle(Time now, const event::ProcessClassified& e);
  void handle(Time now, const event::ProcessExited& e);
  void handle(Time now, const event::GpuCapability& e);
  void handle(Time now, const event::ActuationCompleted& e);
  void handle(Time now, const event::KernelObserved& e);
  void handle(Time now, const event::OperatorSuspend& e);
  void handle(Time now, const event::OperatorResume& e);
  void handle(Time now, const event::TimerFired& e);
  void handle(Time now, const event::Shutdown& e);

  std::vector<SchedClass> classes_;
  ArbiterConfig config_;
  ProcessRegistry processes_;  // before the Accounting, which keeps its figures there
  Accounting accounting_{processes_};
  std::map<GpuId, std::unique_ptr<GpuArbiter>> arbiters_;
  ActionSink sink_;
  std::set<uint64_t> recovering_;  // ids of recover()'s resumes not answered yet
  std::optional<Time> armed_;
  bool stopped_ = false;
  SloController slo_;
  bool slo_configured_ = false;
};

}  // namespace gpreempt::sched
