// A baseline of the evaluation — gpreempt's rule or one of the alternatives it is compared with —
// as the discrete-event engine carries it out (docs/evaluation-des.md). The Simulation calls a
// Policy at fixed points: when it creates a client's queues, before an offline copy launches,
// when online work on a GPU becomes pending or none, and when the run ends. A policy that runs
// lib/sched asks for the Runtime (runtime_use): the Simulation then drives it through the DES's
// actuator port, exactly as gpreemptd drives it through its own.
//
// One file per baseline in eval/des/policies/, one line in policy_registry.cpp: that is how a
// new baseline is added (docs/evaluation-des.md § Adding a baseline).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/des/actuator.h"
#include "eval/des/simulation.h"
#include "eval/des/spec.h"
#include "sched/event.h"
#include "sched/policy_name.h"
#include "sim/gpu/engine.h"

namespace gpreempt::eval::des {

// KFD queue priorities (0..15): HIP's default streams get 7 (pipe MEDIUM).
constexpr uint32_t kDefaultQueuePriority = 7;
constexpr uint32_t kHighQueuePriority = 15;
constexpr uint32_t kLowQueuePriority = 0;

// What the Simulation offers a policy.
class PolicyHost {
 public:
  virtual ~PolicyHost() = default;
  virtual sim::gpu::SimTime now() const = 0;
  // The GPU the spec describes (before Policy::hardware changes anything of it).
  virtual const sim::gpu::GpuProfile& model() const = 0;
  virtual sim::gpu::GpuEngine& engine(uint32_t gpu) = 0;
  // The queues of the online (or offline) clients on GPU `gpu`.
  virtual std::vector<sim::gpu::QueueKey> queues_on(uint32_t gpu, bool online) const = 0;
  // The names of the offline clients on `gpu` (empty: none there).
  virtual std::vector<std::string> offline_on(uint32_t gpu) const = 0;
  // Let the offline copies on `gpu` launch what they may now.
  virtual void pump_offline(uint32_t gpu) = 0;
  // A decision for the result's record (when the spec records decisions).
  virtual void record(Decision d) = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;

  // lib/sched's Runtime, when the policy is one gpreemptd ships ([policy] name, policy_name.h):
  // which one, the trigger of the online class, whether the online clients send begin/end hints,
  // and how long before each arrival an early hint (RequestExpected) goes out (0: none).
  struct RuntimeUse {
    sched::PolicyName policy = sched::PolicyName::kGpreempt;
    sched::RequestSource trigger = sched::RequestSource::kHint;
    bool hints = true;
    sim::gpu::SimTime early_lead = 0;
  };
  virtual std::optional<RuntimeUse> runtime_use() const { return std::nullopt; }

  // The GPUs the baseline runs on, given the model's: asked once, before they are built (so a
  // policy may not touch PolicyHost::engine in its constructor).
  virtual sim::gpu::GpuProfile hardware(const sim::gpu::GpuProfile& model) const { return model; }

  virtual uint32_t queue_priority(bool /*online*/) const { return kDefaultQueuePriority; }
  // A client's queue was created on `gpu`.
  virtual void queue_created(sim::gpu::GpuEngine&, sim::gpu::QueueKey, bool /*online*/) {}
  // The most launches an offline copy keeps in flight, given its spec's.
  virtual uint32_t max_in_flight(uint32_t spec_value) const { return spec_value; }
  // Whether an offline copy on `gpu` may launch now.
  virtual bool may_launch(uint32_t /*gpu*/) const { return true; }
  // Online work on `gpu` became pending (an arrival with nothing pending) or none.
  virtual void online_pending(uint32_t /*gpu*/, bool /*pending*/) {}
  // The run ended at `now`: what the policy measured goes into `res`; its suspension windows
  // (an actuator's are the Simulation's) into `windows`.
  virtual void finish(sim::gpu::SimTime /*now*/, RunResult& /*res*/,
                      std::vector<SuspendedWindow>& /*windows*/) {}
};

// The baseline named `spec.baseline` (policy_registry.cpp), bound to `host`.
std::unique_ptr<Policy> make_policy(const Spec& spec, PolicyHost& host);
// Every baseline's name, in the registry's order.
std::vector<std::string> baseline_names();

}  // namespace gpreempt::eval::des
