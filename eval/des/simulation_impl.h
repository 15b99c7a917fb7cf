// The discrete-event simulation's internals, shared by its files (one concept each):
//   simulation.cpp            setup of the GPUs, clients and baseline, and the event loop;
//   simulation_host.cpp       what the Simulation offers the baseline's policy (policy.h);
//   simulation_clients.cpp    the workloads: launching kernels, online requests and their hints;
//   simulation_llm.cpp        online clients that are LLM servers: a step at a time;
//   simulation_scheduler.cpp  lib/sched's Runtime: events in, its decisions recorded, its timer,
//                             the transparent trigger's queue polling;
//   simulation_results.cpp    what a run measured (RunResult).
// Not an interface: run_simulation (simulation.h) is.
#pragma once

#include "eval/des/simulation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>

#include "eval/des/actuator.h"
#include "eval/des/arrivals.h"
#include "eval/des/llm/server.h"
#include "eval/des/policy.h"
#include "eval/des/program.h"
#include "eval/des/scheduler_setup.h"
#include "sched/activity_detector.h"
#include "sched/runtime.h"
#include "sim/device/device_profile.h"
#include "sim/gpu/engine.h"
#include "sim/gpu/faults.h"
#include "sim/gpu/model_config.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des::detail {

using sim::gpu::GpuEngine;
using sim::gpu::QueueKey;
using sim::gpu::SimTime;

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();
constexpr uint32_t kOfflineGroup = 1;
constexpr uint32_t kOnlineGroup = 2;

inline sched::Time to_sched(SimTime t) { return sched::Time(t); }

// The work of one client on one GPU: its queues there and the instances (requests, iterations)
// being launched or run.
struct Copy {
  uint32_t gpu = 0;
  std::vector<QueueKey> queues;
  uint32_t in_flight = 0;  // launched, not finished
  // Tensor parallel: how long this shard, done with its part, waited for the slowest at the
  // collectives (what another GPU's interference costs this one).
  SimTime collective_wait_ns = 0;
  struct Instance {
    std::vector<uint32_t> deps_left;
    std::vector<uint8_t> ready;
    std::vector<uint32_t> next;  // per queue: position in Program::by_queue of the next launch
    uint32_t launched = 0;
    uint32_t done = 0;
    // Nothing launched yet: the steps without dependencies are ready.
    static Instance fresh(const Program& p) {
      Instance in;
      in.deps_left.resize(p.steps.size());
      in.ready.assign(p.steps.size(), 0);
      in.next.assign(p.queues, 0);
      for (uint32_t i = 0; i < p.steps.size(); ++i) {
        in.deps_left[i] = static_cast<uint32_t>(p.steps[i].after.size());
        if (in.deps_left[i] == 0) in.ready[i] = 1;
      }
      return in;
    }
  };
  std::map<uint64_t, Instance> instances;  // by instance number
};

struct Client {
  std::string name;
  bool online = true;
  int pid = 0;
  sched::ProcessKey key;
  std::vector<uint32_t> gpus;
  Program program;
  std::vector<std::vector<uint32_t>> by_queue;    // step indices per queue, launch order
  std::vector<std::vector<uint32_t>> dependents;  // per step: steps waiting for it
  std::vector<Copy> copies;
  // online
  std::optional<Arrivals> arrivals;
  std::optional<uint64_t> max_requests;
  uint64_t arrived = 0;
  std::deque<SimTime> waiting;  // arrival times of requests not started yet
  bool busy = false;
  SimTime current_arrival = 0;
  uint64_t arrived_hinted = 0;  // the hint id of the next arrival (requests are served in order)
  uint64_t current = 0;  // instance number of the running request
  uint64_t completed = 0;
  std::vector<double> latencies_ms;
  // Tensor-parallel collectives (Step::collective_ns): per (instance, step) waiting for the
  // slowest shard, when each shard got there (kNever: not yet) and how many have.
  struct CollectiveArrivals {
    std::vector<SimTime> at;
    uint32_t count = 0;
  };
  std::map<std::pair<uint64_t, uint32_t>, CollectiveArrivals> collective_arrived;
  // An LLM server (spec online[].llm): each request is a sequence of steps, `program` the current
  // step's kernels (simulation_llm.cpp).
  std::unique_ptr<llm::Server> llm;
  SimTime llm_step_gap_ns = 0;
  SimTime llm_step_started = 0;
  std::vector<double> llm_step_ms;  // each step's span, first launch to last shard's end
  // offline
  bool managed = true;  // the Runtime knows it (spec offline[].managed)
  uint32_t max_in_flight = 64;
  bool sync = false;
  uint64_t next_instance = 0;
  std::map<uint64_t, uint32_t> copies_done;  // instance → copies that finished it
  uint64_t iterations = 0;
};

struct DesEvent {
  SimTime t;
  uint64_t seq;
  std::function<void()> fn;
  bool operator>(const DesEvent& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// The GPU model's profile for the spec: the machine's geometry, the model's costs at the spec's
// band, parameters and calibration scales.
sim::gpu::GpuProfile model_profile(const Spec& spec);

class Simulation final : private PolicyHost {
 public:
  Simulation(const Spec& spec, Observer* obs)
      : spec_(spec), obs_(obs), profile_(model_profile(spec)),
        machine_(sim::make_profile(spec.profile, spec.gpus)) {}

  RunResult run();

 private:
  // ---- PolicyHost (simulation_host.cpp) ----
  SimTime now() const override { return now_; }
  const sim::gpu::GpuProfile& model() const override { return profile_; }
  GpuEngine& engine(uint32_t gpu) override { return *engines_.at(gpu); }
  std::vector<QueueKey> queues_on(uint32_t gpu, bool online) const override;
  std::vector<std::string> offline_on(uint32_t gpu) const override;
  void pump_offline(uint32_t gpu) override;
  void record(Decision d) override;

  // ---- event queue ----
  void post(SimTime delay, std::function<void()> fn) {
    events_.push(DesEvent{now_ + std::max<SimTime>(delay, 0), seq_++, std::move(fn)});
  }
  void post_at(SimTime t, std::function<void()> fn) {
    events_.push(DesEvent{std::max(t, now_), seq_++, std::move(fn)});
  }

  void setup();
  void add_client(Client c);
  // c.program's per-queue launch order and dependents, after the program was set or changed.
  static void index_program(Client& c);
  void start_instance(Client& c, Copy& cp, uint64_t inst);
  void step_ready(Client& c, uint32_t copy, uint64_t inst, uint32_t step);
  void pump(Client& c, uint32_t copy);
  bool may_launch(const Client& c, const Copy& cp) const;
  void kernel_done(Client& c, uint32_t copy, uint64_t inst, uint32_t step, const sim::gpu::JobResult& r);
  // `step` of instance `inst` is over on that copy (for a step followed by an all-reduce: the
  // collective has ended): its dependents may launch.
  void release(Client& c, uint32_t copy, uint64_t inst, uint32_t step);
  void instance_done(Client& c, uint32_t copy, uint64_t inst);

  void schedule_arrival(Client& c);
  void arrive(Client& c);
  void start_request(Client& c);
  void finish_request(Client& c);
  void online_open_changed(uint32_t gpu);
  void online_opened(const Client& c);
  void online_closed(const Client& c);
  // Every online client with a request count has served it: the run is over.
  bool all_served() const;

  // ---- LLM servers (simulation_llm.cpp) ----
  void llm_arrive(Client& c);
  void llm_start_step(Client& c);
  void llm_step_done(Client& c);

  void feed(const sched::Event& e);
  void record_decision(const sched::Action& a);
  void arm_timer(std::optional<sched::Time> at);
  void poll_queues();
  // What the run measured, once the loop has ended (simulation_results.cpp).
  void collect_results();
  void poll_tick(SimTime interval) {
    poll_queues();
    post(interval, [this, interval] { poll_tick(interval); });
  }

  const Spec& spec_;
  Observer* obs_;
  sim::gpu::GpuProfile profile_;
  sim::DeviceProfile machine_;
  std::vector<std::unique_ptr<GpuEngine>> engines_;
  std::vector<sched::GpuId> gpu_ids_;
  std::vector<Client> clients_;
  std::priority_queue<DesEvent, std::vector<DesEvent>, std::greater<>> events_;
  uint64_t seq_ = 0;
  uint64_t des_events_ = 0;
  SimTime now_ = 0;
  SimTime end_ = kNever;
  bool stop_ = false;
  std::vector<uint32_t> online_open_;  // per GPU: requests arrived and not finished
  std::unique_ptr<Policy> policy_;     // the spec's baseline
  std::optional<Policy::RuntimeUse> runtime_use_;  // set: the baseline runs lib/sched's Runtime
  std::optional<SimActuator> actuator_;
  // After the actuator, its port: destroyed first.
  std::optional<sched::Runtime> runtime_;
  uint64_t timer_gen_ = 0;
  RunResult res_;
  std::map<sched::ProcessKey, std::string> names_;
};

}  // namespace gpreempt::eval::des::detail
