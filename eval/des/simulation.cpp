#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des {
namespace detail {

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

void Simulation::index_program(Client& c) {
  const Program& p = c.program;
  c.by_queue.assign(p.queues, {});
  c.dependents.assign(p.steps.size(), {});
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    c.by_queue[p.steps[i].queue].push_back(i);
    for (uint32_t d : p.steps[i].after) c.dependents[d].push_back(i);
  }
}

void Simulation::add_client(Client c) {
  gate_collectives(c.program);
  index_program(c);
  names_[c.key] = c.name;
  clients_.push_back(std::move(c));
}

void Simulation::setup() {
  sim::gpu::EngineOptions eo;
  eo.remap_on_queue_change = false;  // every queue exists from the start
  eo.wg_jitter = spec_.model.wg_jitter;
  if (!spec_.model.faults.empty()) eo.faults = *sim::gpu::parse_fault_plan(spec_.model.faults);
  // The policy exists before the GPUs: it says what hardware it runs on (Policy::hardware).
  policy_ = make_policy(spec_, *this);
  runtime_use_ = policy_->runtime_use();
  const sim::gpu::GpuProfile hardware = policy_->hardware(profile_);
  for (uint32_t g = 0; g < spec_.gpus; ++g) {
    eo.seed = spec_.seed * 1000003ull + g;
    engines_.push_back(std::make_unique<GpuEngine>(hardware, machine_.gpus.at(g).gpu_id, eo));
    gpu_ids_.push_back(machine_.gpus.at(g).gpu_id);
  }
  online_open_.assign(spec_.gpus, 0);

  int pid = 1000;
  for (std::size_t i = 0; i < spec_.online.size(); ++i) {
    const OnlineDef& d = spec_.online[i];
    Client c;
    c.name = d.name;
    c.online = true;
    c.pid = pid++;
    c.key = {c.pid, static_cast<uint64_t>(c.pid)};
    c.gpus = d.gpus;
    const std::string path = "online[" + std::to_string(i) + "]";
    if (d.llm) {
      // Its steps are formed as it runs; the client's queue exists from the start. Each GPU of a
      // tensor-parallel server runs the grid's shard: one shard per GPU.
      auto grid = llm::StepGrid::load(d.llm->steps, path + ".llm.steps");
      if (grid->tp() != c.gpus.size())
        throw SpecError(path + ".llm.steps", "the step grid is one shard of " + std::to_string(grid->tp()) +
                                                 " (recorded with --tp " + std::to_string(grid->tp()) + ") but the server has " +
                                                 std::to_string(c.gpus.size()) + " GPU(s)");
      c.llm = std::make_unique<llm::Server>(*d.llm, *d.requests, std::move(grid),
                                            llm::CollectiveCost{d.allreduce.us, d.allreduce.bus_gbps});
      c.llm_step_gap_ns = static_cast<SimTime>(std::llround(d.llm->step_gap_us * 1e3));
    } else {
      c.program = load_program(d.program, 1, profile_, path);
      if (c.gpus.size() > 1 && d.allreduce.us > 0)
        for (std::size_t s = d.allreduce.every; s <= c.program.steps.size(); s += d.allreduce.every)
          c.program.steps[s - 1].collective_ns = static_cast<SimTime>(std::llround(d.allreduce.us * 1e3));
    }
    c.arrivals.emplace(d.arrival, spec_.seed * 7919ull + i);
    c.max_requests = d.requests;
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
    c.max_in_flight = policy_->max_in_flight(d.max_in_flight);
    c.sync = d.sync_each_iteration.value_or(!d.program.trace.empty());
    c.managed = d.managed;
    add_client(std::move(c));
  }

  for (auto& c : clients_) {
    const uint32_t prio = policy_->queue_priority(c.online);
    for (uint32_t g : c.gpus) {
      Copy cp;
      cp.gpu = g;
      for (uint32_t q = 0; q < c.program.queues; ++q) {
        const QueueKey k{c.pid, q};
        engines_[g]->add_queue(k, prio, false);
        engines_[g]->set_queue_group(k, c.online ? kOnlineGroup : kOfflineGroup);
        policy_->queue_created(*engines_[g], k, c.online);
        cp.queues.push_back(k);
      }
      c.copies.push_back(std::move(cp));
    }
  }
  if (runtime_use_) {
    std::vector<GpuEngine*> eng;
    for (auto& e : engines_) eng.push_back(e.get());
    actuator_.emplace(
        eng, gpu_ids_, profile_.clock_mhz,
        static_cast<SimTime>(std::llround(spec_.model.actuator_overhead_us * 1e3)),
        [this](SimTime delay, std::function<void()> fn) { post(delay, std::move(fn)); },
        [this](const sched::event::ActuationCompleted& a) { feed(a); });
    sched::ArbiterConfig config = arbiter_config(spec_.policy);
    config.policy = runtime_use_->policy;
    runtime_.emplace(scheduler_classes(runtime_use_->trigger, spec_.policy), config,
                     sched::Runtime::Ports{&*actuator_,
                                           [this](std::optional<sched::Time> at) { arm_timer(at); },
                                           [this](sched::Time t, const std::vector<sched::Action>& as) {
                                             if (obs_) obs_->scheduler_actions(t, as);
                                             for (const auto& a : as) record_decision(a);
                                           },
                                           [this](sched::Time t, const sched::Event& e) {
                                             if (obs_) obs_->scheduler_event(t, e);
                                           },
                                           {}});
    for (auto& c : clients_) {
      if (!c.managed) continue;  // a process the daemon never classifies: never suspended
      std::vector<sched::GpuId> ids;
      for (size_t j = 0; j < c.gpus.size(); ++j) {
        ids.push_back(gpu_ids_[c.gpus[j]]);
        actuator_->add_queues(c.key, c.gpus[j], c.copies[j].queues);
      }
      feed(sched::event::ProcessClassified{c.key, c.online ? "online" : "offline", ids});
    }
    if (runtime_use_->trigger == sched::RequestSource::kTransparent) {
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
  collect_results();
  return std::move(res_);
}

}  // namespace detail

RunResult run_simulation(const Spec& spec, Observer* observer) {
  detail::Simulation s(spec, observer);
  return s.run();
}

}  // namespace gpreempt::eval::des
