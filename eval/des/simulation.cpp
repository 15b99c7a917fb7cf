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
#include "eval/des/program.h"
#include "eval/des/scheduler_setup.h"
#include "sched/activity_detector.h"
#include "sched/scheduler.h"
#include "sim/device/device_profile.h"
#include "sim/gpu/engine.h"
#include "sim/gpu/faults.h"
#include "sim/gpu/model_config.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des {

using sim::gpu::GpuEngine;
using sim::gpu::QueueKey;
using sim::gpu::SimTime;

namespace {

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();
constexpr uint32_t kOfflineGroup = 1;
constexpr uint32_t kOnlineGroup = 2;
// KFD queue priorities (0..15): HIP's default streams get 7 (pipe MEDIUM); the priority baseline
// puts the online stream at the top (HIGH pipe) and the offline one at the bottom (LOW pipe).
constexpr uint32_t kDefaultQueuePriority = 7;
constexpr uint32_t kHighQueuePriority = 15;
constexpr uint32_t kLowQueuePriority = 0;

sched::Time to_sched(SimTime t) { return sched::Time(t); }

// The work of one client on one GPU: its queues there and the instances (requests, iterations)
// being launched or run.
struct Copy {
  uint32_t gpu = 0;
  std::vector<QueueKey> queues;
  uint32_t in_flight = 0;  // launched, not finished
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
  // Tensor-parallel collective (spec AllReduceDef): the steps followed by an all-reduce, its
  // length, and per (request, step) how many shards have finished that step.
  std::vector<uint8_t> allreduce_after;
  SimTime allreduce_ns = 0;
  std::map<std::pair<uint64_t, uint32_t>, uint32_t> allreduce_arrived;
  // offline
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

sim::gpu::GpuProfile model_profile(const Spec& spec) {
  // Geometry from the machine's device profile, timing from the model: one derivation
  // (sim/device/gpu_geometry.h), the same the simulator's daemon uses.
  sim::gpu::GpuProfile p = *sim::gpu::profile_by_name(spec.profile);
  sim::gpu::apply_cost_band(p, spec.model.cost_band);
  for (const auto& [name, value] : spec.model.params) sim::gpu::set_profile_param(p, name, value);
  // The save and restore cost scale as their bytes would: bandwidth down, fixed cost up.
  const double c = spec.model.cwsr_save_scale;
  if (c > 0) {
    p.save_bandwidth_gbps /= c;
    p.restore_bandwidth_gbps /= c;
  }
  p.save_fixed_ns = static_cast<SimTime>(std::llround(static_cast<double>(p.save_fixed_ns) * c));
  p.restore_fixed_ns = static_cast<SimTime>(std::llround(static_cast<double>(p.restore_fixed_ns) * c));
  const double h = spec.model.hws_roundtrip_scale;
  p.unmap_latency_ns = static_cast<SimTime>(std::llround(static_cast<double>(p.unmap_latency_ns) * h));
  p.map_latency_ns = static_cast<SimTime>(std::llround(static_cast<double>(p.map_latency_ns) * h));
  return p;
}

class Simulation {
 public:
  Simulation(const Spec& spec, Observer* obs)
      : spec_(spec), obs_(obs), profile_(model_profile(spec)),
        machine_(sim::make_profile(spec.profile, spec.gpus)) {}

  RunResult run();

 private:
  // ---- event queue ----
  void post(SimTime delay, std::function<void()> fn) {
    events_.push(DesEvent{now_ + std::max<SimTime>(delay, 0), seq_++, std::move(fn)});
  }
  void post_at(SimTime t, std::function<void()> fn) {
    events_.push(DesEvent{std::max(t, now_), seq_++, std::move(fn)});
  }

  void setup();
  void add_client(Client c);
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

  void feed(const sched::Event& e);
  void perform(const std::vector<sched::Action>& actions);
  void poll_queues();
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
  std::vector<bool> offline_held_;     // oracle: offline queues switched out on that GPU
  std::vector<SimTime> oracle_since_;
  std::optional<sched::Scheduler> sched_;
  // The transparent trigger gpreemptd ships (gpreemptd/transparent), fed the same pointer samples.
  sched::ActivityDetector detector_;
  std::optional<SimActuator> actuator_;
  uint64_t timer_gen_ = 0;
  RunResult res_;
  std::map<sched::ProcessKey, std::string> names_;
  uint64_t oracle_switches_ = 0;
  SimTime oracle_suspended_ = 0;
  std::vector<SuspendedWindow> oracle_windows_;
};

void Simulation::add_client(Client c) {
  Program& p = c.program;
  if (!c.allreduce_after.empty()) {
    // The collective ends a step on every queue: the next step of each queue waits for it.
    for (uint32_t s = 0; s < p.steps.size(); ++s) {
      if (!c.allreduce_after[s]) continue;
      std::set<uint32_t> gated;
      for (uint32_t d = s + 1; d < p.steps.size(); ++d) {
        if (!gated.insert(p.steps[d].queue).second) continue;
        auto& after = p.steps[d].after;
        if (std::find(after.begin(), after.end(), s) == after.end()) after.push_back(s);
      }
    }
  }
  c.by_queue.assign(p.queues, {});
  c.dependents.assign(p.steps.size(), {});
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    c.by_queue[p.steps[i].queue].push_back(i);
    for (uint32_t d : p.steps[i].after) c.dependents[d].push_back(i);
  }
  names_[c.key] = c.name;
  clients_.push_back(std::move(c));
}

void Simulation::setup() {
  const Baseline b = spec_.baseline;
  sim::gpu::EngineOptions eo;
  eo.remap_on_queue_change = false;  // every queue exists from the start
  eo.wg_jitter = spec_.model.wg_jitter;
  if (!spec_.model.faults.empty()) eo.faults = *sim::gpu::parse_fault_plan(spec_.model.faults);
  for (uint32_t g = 0; g < spec_.gpus; ++g) {
    eo.seed = spec_.seed * 1000003ull + g;
    engines_.push_back(std::make_unique<GpuEngine>(profile_, machine_.gpus.at(g).gpu_id, eo));
    gpu_ids_.push_back(machine_.gpus.at(g).gpu_id);
  }
  online_open_.assign(spec_.gpus, 0);
  offline_held_.assign(spec_.gpus, false);
  oracle_since_.assign(spec_.gpus, 0);

  const uint32_t cus = profile_.cus_per_xcc;
  uint32_t online_cus = static_cast<uint32_t>(std::llround(spec_.partition_online_cu_fraction * cus));
  online_cus = std::clamp<uint32_t>(online_cus, 1, cus - 1);

  int pid = 1000;
  for (std::size_t i = 0; i < spec_.online.size(); ++i) {
    const OnlineDef& d = spec_.online[i];
    Client c;
    c.name = d.name;
    c.online = true;
    c.pid = pid++;
    c.key = {c.pid, static_cast<uint64_t>(c.pid)};
    c.gpus = d.gpus;
    c.program = load_program(d.program, 1, profile_, "online[" + std::to_string(i) + "]");
    c.arrivals.emplace(d.arrival, spec_.seed * 7919ull + i);
    c.max_requests = d.requests;
    if (c.gpus.size() > 1 && d.allreduce.us > 0) {
      c.allreduce_ns = static_cast<SimTime>(std::llround(d.allreduce.us * 1e3));
      c.allreduce_after.assign(c.program.steps.size(), 0);
      for (std::size_t s = d.allreduce.every; s <= c.program.steps.size(); s += d.allreduce.every)
        c.allreduce_after[s - 1] = 1;
    }
    add_client(std::move(c));
  }
  for (std::size_t i = 0; i < spec_.offline.size(); ++i) {
    const OfflineDef& d = spec_.offline[i];
    Client c;
    c.name = d.name;
    c.online = false;
    c.pid = pid++;
    c.key = {c.pid, static_cast<uint64_t>(c.pid)};
    c.gpus = d.gpus;
    c.program = load_program(d.program, d.queues, profile_, "offline[" + std::to_string(i) + "]");
    c.max_in_flight = b == Baseline::kThrottle ? spec_.throttle_max_in_flight : d.max_in_flight;
    c.sync = d.sync_each_iteration.value_or(!d.program.trace.empty());
    add_client(std::move(c));
  }

  for (auto& c : clients_) {
    uint32_t prio = kDefaultQueuePriority;
    if (b == Baseline::kPriority || b == Baseline::kOracle)
      prio = c.online ? kHighQueuePriority : kLowQueuePriority;
    for (uint32_t g : c.gpus) {
      Copy cp;
      cp.gpu = g;
      for (uint32_t q = 0; q < c.program.queues; ++q) {
        const QueueKey k{c.pid, q};
        engines_[g]->add_queue(k, prio, false);
        engines_[g]->set_queue_group(k, c.online ? kOnlineGroup : kOfflineGroup);
        if (b == Baseline::kPartition) {
          if (c.online) engines_[g]->set_cu_mask(k, 0, online_cus);
          else engines_[g]->set_cu_mask(k, online_cus, cus - online_cus);
        }
        cp.queues.push_back(k);
      }
      c.copies.push_back(std::move(cp));
    }
  }
  if (b == Baseline::kPartition)
    res_.partition_offline_capacity_waves = static_cast<uint64_t>(cus - online_cus) * profile_.max_waves_per_cu;

  if (uses_scheduler(b)) {
    sched_.emplace(scheduler_classes(b, spec_.policy), arbiter_config(spec_.policy));
    std::vector<GpuEngine*> eng;
    for (auto& e : engines_) eng.push_back(e.get());
    actuator_.emplace(
        eng, gpu_ids_, profile_.clock_mhz,
        static_cast<SimTime>(std::llround(spec_.model.actuator_overhead_us * 1e3)),
        [this](SimTime delay, std::function<void()> fn) { post(delay, std::move(fn)); },
        [this](const sched::event::ActuationCompleted& a) { feed(a); });
    for (auto& c : clients_) {
      std::vector<sched::GpuId> ids;
      for (size_t j = 0; j < c.gpus.size(); ++j) {
        ids.push_back(gpu_ids_[c.gpus[j]]);
        actuator_->add_queues(c.key, c.gpus[j], c.copies[j].queues);
      }
      feed(sched::event::ProcessClassified{c.key, c.online ? "online" : "offline", ids});
    }
    if (b == Baseline::kGpreemptTransparent) {
      const double us = spec_.policy.poll_interval_us.value_or(
          static_cast<double>(sched::kDefaultPollInterval.count()) / 1e3);
      const SimTime interval = std::max<SimTime>(1, static_cast<SimTime>(std::llround(us * 1e3)));
      post(interval, [this, interval] { poll_tick(interval); });
    }
  }

  for (auto& c : clients_) {
    if (c.online) {
      schedule_arrival(c);
    } else {
      for (uint32_t j = 0; j < c.copies.size(); ++j) start_instance(c, c.copies[j], 0);
      c.next_instance = 1;
    }
  }
}

// ---- launching ------------------------------------------------------------------------------

void Simulation::start_instance(Client& c, Copy& cp, uint64_t inst) {
  cp.instances.emplace(inst, Copy::Instance::fresh(c.program));
  const uint32_t copy = static_cast<uint32_t>(&cp - c.copies.data());
  pump(c, copy);
}

bool Simulation::may_launch(const Client& c, const Copy& cp) const {
  if (c.online) return true;
  if (cp.in_flight >= c.max_in_flight) return false;
  // XSched Lv1: the offline host holds its launches while online work is pending on the GPU.
  if (spec_.baseline == Baseline::kThrottle && online_open_[cp.gpu] > 0) return false;
  return true;
}

void Simulation::pump(Client& c, uint32_t copy) {
  Copy& cp = c.copies[copy];
  const Program& p = c.program;
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto it = cp.instances.begin(); it != cp.instances.end(); ++it) {
      const uint64_t inst = it->first;
      Copy::Instance& in = it->second;
      for (uint32_t q = 0; q < p.queues; ++q) {
        while (in.next[q] < c.by_queue[q].size()) {
          const uint32_t s = c.by_queue[q][in.next[q]];
          if (!in.ready[s] || !may_launch(c, cp)) break;
          ++in.next[q];
          ++in.launched;
          ++cp.in_flight;
          if (!c.online && obs_) obs_->offline_in_flight(now_, cp.gpu, c.name, cp.in_flight);
          Client* cl = &c;
          engines_[cp.gpu]->submit_kernel(cp.queues[q], p.steps[s].kernel,
                                          [this, cl, copy, inst, s](const sim::gpu::JobResult& r) {
                                            post(0, [this, cl, copy, inst, s, r] { kernel_done(*cl, copy, inst, s, r); });
                                          });
        }
      }
      // A pipelined offline job starts its next iteration once this one is all launched.
      if (!c.online && !c.sync && in.launched == p.steps.size() && std::next(it) == cp.instances.end() &&
          !stop_) {
        const uint64_t next = inst + 1;
        cp.instances.emplace(next, Copy::Instance::fresh(p));
        progress = may_launch(c, cp);
        break;  // iterators: start over
      }
    }
  }
}

void Simulation::step_ready(Client& c, uint32_t copy, uint64_t inst, uint32_t step) {
  auto it = c.copies[copy].instances.find(inst);
  if (it == c.copies[copy].instances.end()) return;
  it->second.ready[step] = 1;
  pump(c, copy);
}

void Simulation::kernel_done(Client& c, uint32_t copy, uint64_t inst, uint32_t step,
                             const sim::gpu::JobResult& r) {
  Copy& cp = c.copies[copy];
  --cp.in_flight;
  if (!c.online && obs_) obs_->offline_in_flight(now_, cp.gpu, c.name, cp.in_flight);
  if (obs_) obs_->kernel_ran(cp.gpu, c.name, c.online, r.queued, r.started, r.finished);
  if (spec_.record.timeline && r.started >= static_cast<SimTime>(spec_.record.timeline_from_s * 1e9) &&
      static_cast<double>(r.started) <= spec_.record.timeline_to_s * 1e9)
    res_.timeline.push_back({cp.gpu, "kernel", c.name, r.started, r.finished});
  // No KernelObserved from here: gpreemptd never learns a kernel's exact length. What it learns,
  // from the transparent trigger's pointer samples, poll_queues feeds.
  auto it = cp.instances.find(inst);
  if (it != cp.instances.end()) {
    ++it->second.done;
    if (!c.allreduce_after.empty() && c.allreduce_after[step]) {
      // The all-reduce starts once the slowest shard has finished this step, and every shard
      // goes on when it ends.
      const auto key = std::make_pair(inst, step);
      if (++c.allreduce_arrived[key] == c.copies.size()) {
        c.allreduce_arrived.erase(key);
        Client* cl = &c;
        post(c.allreduce_ns, [this, cl, inst, step] {
          for (uint32_t j = 0; j < cl->copies.size(); ++j) release(*cl, j, inst, step);
        });
      }
    } else {
      release(c, copy, inst, step);
      return;
    }
  }
  pump(c, copy);
}

void Simulation::release(Client& c, uint32_t copy, uint64_t inst, uint32_t step) {
  Copy& cp = c.copies[copy];
  auto it = cp.instances.find(inst);
  if (it != cp.instances.end()) {
    Copy::Instance& in = it->second;
    for (uint32_t d : c.dependents[step]) {
      if (--in.deps_left[d] == 0) {
        const SimTime delay = c.program.steps[d].host_delay_ns;
        Client* cl = &c;
        if (delay <= 0) in.ready[d] = 1;
        else post(delay, [this, cl, copy, inst, d] { step_ready(*cl, copy, inst, d); });
      }
    }
    if (in.done == c.program.steps.size()) {
      cp.instances.erase(it);
      instance_done(c, copy, inst);
    }
  }
  pump(c, copy);
}

void Simulation::instance_done(Client& c, uint32_t copy, uint64_t inst) {
  if (++c.copies_done[inst] < c.copies.size()) return;
  c.copies_done.erase(inst);
  if (c.online) {
    finish_request(c);
    return;
  }
  ++c.iterations;
  if (c.sync && !stop_) {
    const uint64_t next = inst + 1;
    for (auto& cp : c.copies) start_instance(c, cp, next);
  }
  (void)copy;
}

// ---- online requests ------------------------------------------------------------------------

void Simulation::schedule_arrival(Client& c) {
  if (c.max_requests && c.arrived >= *c.max_requests) return;
  const SimTime t = c.arrivals->next();
  if (t > end_) return;
  ++c.arrived;
  const SimTime lead = spec_.baseline == Baseline::kGpreemptEarly
                           ? static_cast<SimTime>(std::llround(spec_.policy.early_hint_us * 1e3))
                           : 0;
  Client* cl = &c;
  // The client knows `lead` ahead that a request is coming (early hint): the arrivals are
  // generated one at a time from that moment on.
  post_at(t - lead, [this, cl, t, lead] {
    if (lead > 0)
      feed(sched::event::RequestExpected{cl->key, sched::Duration(t - now_), sched::RequestSource::kHint});
    post_at(t, [this, cl] { arrive(*cl); });
    schedule_arrival(*cl);
  });
}

void Simulation::arrive(Client& c) {
  // The server hints a request from its arrival to its response: the time it waits behind the
  // previous ones is part of its latency, and of what its class's objective judges.
  if (spec_.baseline == Baseline::kGpreemptHint || spec_.baseline == Baseline::kGpreemptEarly)
    feed(sched::event::RequestStarted{c.key, c.arrived_hinted++, sched::RequestSource::kHint});
  c.waiting.push_back(now_);
  for (uint32_t g : c.gpus) {
    if (online_open_[g]++ == 0) online_open_changed(g);
  }
  if (!c.busy) start_request(c);
}

void Simulation::start_request(Client& c) {
  c.busy = true;
  c.current_arrival = c.waiting.front();
  c.waiting.pop_front();
  const uint64_t inst = c.current++;
  for (auto& cp : c.copies) start_instance(c, cp, inst);
}

void Simulation::finish_request(Client& c) {
  const double ms = static_cast<double>(now_ - c.current_arrival) / 1e6;
  c.latencies_ms.push_back(ms);
  if (spec_.record.latencies) res_.latencies_ms.push_back(ms);
  ++c.completed;
  if (spec_.baseline == Baseline::kGpreemptHint || spec_.baseline == Baseline::kGpreemptEarly)
    feed(sched::event::RequestFinished{c.key, c.current - 1, sched::RequestSource::kHint});
  for (uint32_t g : c.gpus) {
    if (--online_open_[g] == 0) online_open_changed(g);
  }
  c.busy = false;
  bool all = true, any = false;
  for (const auto& x : clients_)
    if (x.online && x.max_requests) {
      any = true;
      all &= x.completed >= *x.max_requests;
    }
  if (any && all) {
    stop_ = true;
    return;
  }
  if (!c.waiting.empty()) start_request(c);
}

void Simulation::online_open_changed(uint32_t g) {
  const bool pending = online_open_[g] > 0;
  if (spec_.baseline == Baseline::kThrottle && !pending) {
    for (auto& c : clients_)
      if (!c.online)
        for (uint32_t j = 0; j < c.copies.size(); ++j)
          if (c.copies[j].gpu == g) pump(c, j);
  }
  if (spec_.baseline == Baseline::kOracle && pending != offline_held_[g]) {
    // The bound: offline queues leave the GPU the instant online work is pending and come back
    // the instant it is not, at no cost.
    offline_held_[g] = pending;
    std::vector<QueueKey> runnable;
    for (const auto& c : clients_)
      for (const auto& cp : c.copies)
        if (cp.gpu == g && (c.online || !pending))
          runnable.insert(runnable.end(), cp.queues.begin(), cp.queues.end());
    engines_[g]->set_runnable_instant(runnable);
    bool has_offline = false;
    for (const auto& c : clients_)
      for (const auto& cp : c.copies) has_offline |= !c.online && cp.gpu == g;
    if (!has_offline) return;
    if (pending) {
      ++oracle_switches_;
      oracle_since_[g] = now_;
    } else {
      oracle_suspended_ += now_ - oracle_since_[g];
      oracle_windows_.push_back({g, {}, oracle_since_[g], now_});
    }
    if (spec_.record.decisions) {
      Decision d{now_, g, pending ? "suspend" : "resume", {}, "oracle"};
      for (const auto& c : clients_)
        if (!c.online)
          for (const auto& cp : c.copies)
            if (cp.gpu == g) d.targets.push_back(c.name);
      res_.decisions.push_back(std::move(d));
    }
  }
}

// ---- the Scheduler --------------------------------------------------------------------------

void Simulation::feed(const sched::Event& e) {
  if (obs_) obs_->scheduler_event(to_sched(now_), e);
  auto actions = sched_->on_event(to_sched(now_), e);
  if (obs_) obs_->scheduler_actions(to_sched(now_), actions);
  perform(actions);
}

void Simulation::perform(const std::vector<sched::Action>& actions) {
  for (const auto& a : actions) {
    if (const auto* s = std::get_if<sched::action::Suspend>(&a)) {
      if (spec_.record.decisions) {
        Decision d{now_, 0, "suspend", {}, sched::to_string(s->reason)};
        d.gpu = static_cast<uint32_t>(std::find(gpu_ids_.begin(), gpu_ids_.end(), s->gpu) - gpu_ids_.begin());
        for (const auto& k : s->targets) d.targets.push_back(names_[k]);
        res_.decisions.push_back(std::move(d));
      }
      actuator_->perform(*s, now_);
    } else if (const auto* r = std::get_if<sched::action::Resume>(&a)) {
      if (spec_.record.decisions) {
        Decision d{now_, 0, "resume", {}, sched::to_string(r->reason)};
        d.gpu = static_cast<uint32_t>(std::find(gpu_ids_.begin(), gpu_ids_.end(), r->gpu) - gpu_ids_.begin());
        for (const auto& k : r->targets) d.targets.push_back(names_[k]);
        res_.decisions.push_back(std::move(d));
      }
      actuator_->perform(*r, now_);
    } else if (const auto* t = std::get_if<sched::action::ArmTimer>(&a)) {
      const uint64_t gen = ++timer_gen_;
      if (t->at)
        post_at(t->at->count(), [this, gen] {
          if (gen == timer_gen_) feed(sched::event::TimerFired{});
        });
    }
    // PriorityOnly cannot happen: every simulated GPU supports suspend.
  }
}

void Simulation::poll_queues() {
  // The transparent trigger as gpreemptd runs it: each online queue's read and write pointers,
  // read every poll interval, go to the ActivityDetector, whose request and kernel-length events
  // go to the scheduler. A queue's packets are its jobs: the read pointer counts those retired,
  // the write pointer those submitted.
  for (auto& c : clients_) {
    if (!c.online) continue;
    std::vector<sched::QueueActivitySample> samples;
    for (const auto& cp : c.copies)
      for (const auto& q : cp.queues) {
        const uint32_t gpu = cp.gpu;
        auto st = engines_[gpu]->queue_state(q);
        if (!st) continue;
        // Unique within the process: the engine's queue id is per GPU.
        const uint64_t queue = (static_cast<uint64_t>(gpu) << 32) | q.queue_id;
        samples.push_back({gpu_ids_[gpu], queue, st->completed, st->completed + st->jobs});
      }
    for (const auto& e : detector_.update(to_sched(now_), c.key, samples)) feed(e);
  }
}

// ---- the loop ---------------------------------------------------------------------------------

RunResult Simulation::run() {
  bool by_requests = false;
  for (const auto& d : spec_.online) by_requests |= d.requests.has_value();
  end_ = by_requests ? kNever : static_cast<SimTime>(std::llround(spec_.duration_s * 1e9));
  setup();
  while (!stop_) {
    SimTime t_eng = kNever;
    for (const auto& e : engines_)
      if (auto t = e->next_event_time()) t_eng = std::min(t_eng, *t);
    const SimTime t_des = events_.empty() ? kNever : events_.top().t;
    const SimTime t = std::min(t_eng, t_des);
    if (t == kNever || t > end_) break;
    now_ = t;
    if (t_eng <= t_des) {
      for (auto& e : engines_)
        if (auto te = e->next_event_time(); te && *te <= t) e->advance_to(t);
      continue;
    }
    for (auto& e : engines_) e->advance_to(t);
    DesEvent ev = events_.top();
    events_.pop();
    ++des_events_;
    ev.fn();
  }
  if (!stop_ && end_ != kNever) now_ = end_;
  for (auto& e : engines_) e->advance_to(now_);

  res_.sim_seconds = static_cast<double>(now_) / 1e9;
  res_.events = des_events_;
  for (const auto& e : engines_) {
    res_.events += e->counters().events;
    res_.waves_saved += e->counters().waves_saved;
    res_.runlist.insert(res_.runlist.end(), e->records().begin(), e->records().end());
  }
  std::set<uint32_t> offline_gpus;
  for (auto& c : clients_) {
    ClientRow row;
    row.name = c.name;
    row.online = c.online;
    row.requests = c.completed;
    row.latencies_ms = c.latencies_ms;
    row.iterations = c.iterations;
    if (!c.online) {
      res_.offline_iterations += c.iterations;
      offline_gpus.insert(c.gpus.begin(), c.gpus.end());
    }
    res_.clients.push_back(std::move(row));
  }
  if (!offline_gpus.empty() && now_ > 0) {
    double sum = 0;
    for (uint32_t g : offline_gpus) sum += static_cast<double>(engines_[g]->group_busy_ns(kOfflineGroup)) / static_cast<double>(now_);
    res_.offline_gpu_busy_fraction = sum / static_cast<double>(offline_gpus.size());
  }
  std::vector<SuspendedWindow> windows;
  if (actuator_) {
    actuator_->finish(now_);
    res_.suspensions = actuator_->suspensions();
    for (sched::GpuId id : gpu_ids_)
      if (const sched::GpuArbiter* arb = sched_ ? sched_->gpu(id) : nullptr)
        res_.flaps += arb->stats().flaps;
    res_.actuation_timeouts = actuator_->timeouts();
    windows = actuator_->windows();
  }
  if (spec_.baseline == Baseline::kOracle) {
    for (uint32_t g = 0; g < spec_.gpus; ++g)
      if (offline_held_[g] && offline_gpus.count(g)) {
        oracle_suspended_ += now_ - oracle_since_[g];
        oracle_windows_.push_back({g, {}, oracle_since_[g], now_});
      }
    res_.suspensions = oracle_switches_;
    windows = oracle_windows_;
  }
  SimTime suspended = 0;
  for (const auto& w : windows) {
    suspended += w.end - w.start;
    if (spec_.record.timeline && static_cast<double>(w.end) >= spec_.record.timeline_from_s * 1e9 &&
        static_cast<double>(w.start) <= spec_.record.timeline_to_s * 1e9) {
      std::string who = "offline";
      if (auto it = names_.find(w.key); it != names_.end()) who = it->second;
      res_.timeline.push_back({w.gpu, "suspended", who, w.start, w.end});
    }
  }
  res_.suspended_s = static_cast<double>(suspended) / 1e9;
  if (spec_.baseline == Baseline::kPartition) {
    const uint32_t cus = profile_.cus_per_xcc;
    const uint64_t offline_cus = res_.partition_offline_capacity_waves / profile_.max_waves_per_cu;
    for (const auto& e : engines_)
      res_.partition_offline_peak_waves = std::max(
          res_.partition_offline_peak_waves,
          e->cu_mask_peak_waves(cus - static_cast<uint32_t>(offline_cus), static_cast<uint32_t>(offline_cus)));
  }
  std::stable_sort(res_.timeline.begin(), res_.timeline.end(),
                   [](const TimelineEntry& a, const TimelineEntry& b) { return a.start < b.start; });
  return std::move(res_);
}

}  // namespace

RunResult run_simulation(const Spec& spec, Observer* observer) {
  Simulation s(spec, observer);
  return s.run();
}

}  // namespace gpreempt::eval::des
