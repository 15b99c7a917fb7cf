// The discrete-event evaluation engine (issue 15): the sim/gpu GPU model in simulated time, online
// clients and offline jobs replaying their kernels, and — for the gpreempt baselines — the real
// lib/sched Runtime deciding, its actions performed by SimActuator (its actuator port) and its
// timer kept in simulated time. Every baseline is a Policy (policy.h, one file each in
// policies/), modelled as its definition says (docs/evaluation-des.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/des/llm/request.h"
#include "eval/des/spec.h"
#include "sched/action.h"
#include "sched/event.h"
#include "sim/gpu/profile.h"
#include "sim/gpu/runlist_record.h"

namespace gpreempt::eval::des {

// Sees what happens inside a run (tests check the baselines' definitions with it).
class Observer {
 public:
  virtual ~Observer() = default;
  // Every event the DES fed the Scheduler, and the actions it returned.
  virtual void scheduler_event(sched::Time, const sched::Event&) {}
  virtual void scheduler_actions(sched::Time, const std::vector<sched::Action>&) {}
  // An offline job launched a kernel / one finished: launched-but-unfinished count on that GPU.
  virtual void offline_in_flight(sim::gpu::SimTime, uint32_t /*gpu*/, const std::string& /*job*/,
                                 uint32_t /*in_flight*/) {}
  // A kernel ran: its queue priority class, and times (started = packet processed).
  virtual void kernel_ran(uint32_t /*gpu*/, const std::string& /*who*/, bool /*online*/,
                          sim::gpu::SimTime /*queued*/, sim::gpu::SimTime /*started*/,
                          sim::gpu::SimTime /*finished*/) {}
};

struct TimelineEntry {
  uint32_t gpu = 0;
  std::string kind;  // "kernel" | "suspended"
  std::string who;
  sim::gpu::SimTime start = 0, end = 0;
};

struct Decision {
  sim::gpu::SimTime t = 0;
  uint32_t gpu = 0;
  std::string action;  // "suspend" | "resume"
  std::vector<std::string> targets;
  std::string reason;
};

struct ClientRow {
  std::string name;
  bool online = true;
  uint64_t requests = 0;  // online: completed requests
  std::vector<double> latencies_ms;
  uint64_t iterations = 0;  // offline
};

// An LLM server's run: its finished requests with their timestamps, and its objectives.
struct LlmRow {
  std::string name;
  std::vector<llm::Request> finished;  // in completion order
  double ttft_slo_ms = 0, tpot_slo_ms = 0;
  uint64_t steps = 0;
  uint64_t preemptions = 0;     // recompute preemptions (KV cache full)
  uint64_t batched_tokens = 0;  // tokens computed over all steps (prefill and decode)
  std::vector<double> step_ms;  // each step's span, first launch to its end on every GPU
  // Per GPU of the server (one shard each): its index, and the time its shard spent at the
  // collectives waiting for the slowest, over the run (ms).
  std::vector<uint32_t> gpus;
  std::vector<double> collective_wait_ms;
};

struct RunResult {
  std::vector<double> latencies_ms;  // every completed online request, in completion order
  std::vector<ClientRow> clients;
  uint64_t offline_iterations = 0;
  double offline_gpu_busy_fraction = 0;  // mean over GPUs with offline work
  double online_gpu_busy_fraction = 0;   // mean over GPUs with online work
  std::vector<LlmRow> llm;
  uint64_t suspensions = 0;
  uint64_t flaps = 0;  // request suspends within the hysteresis of an idle resume (all GPUs)
  double suspended_s = 0;
  uint64_t actuation_timeouts = 0;
  uint64_t waves_saved = 0;  // CWSR-saved waves (runlist updates), all GPUs
  std::vector<sim::gpu::RunlistRecord> runlist;  // the model's runlist updates, GPU by GPU
  double sim_seconds = 0;
  uint64_t events = 0;
  std::vector<TimelineEntry> timeline;
  std::vector<Decision> decisions;
  // Partition: peak waves resident in the offline CU range on any XCC, and its capacity.
  uint64_t partition_offline_peak_waves = 0;
  uint64_t partition_offline_capacity_waves = 0;
};

RunResult run_simulation(const Spec& spec, Observer* observer = nullptr);

}  // namespace gpreempt::eval::des
