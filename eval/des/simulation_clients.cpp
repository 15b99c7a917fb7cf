#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

// ---- launching ------------------------------------------------------------------------------

void Simulation::start_instance(Client& c, Copy& cp, uint64_t inst) {
  cp.instances.emplace(inst, Copy::Instance::fresh(c.program));
  const uint32_t copy = static_cast<uint32_t>(&cp - c.copies.data());
  pump(c, copy);
}

bool Simulation::may_launch(const Client& c, const Copy& cp) const {
  if (c.online) return true;
  if (cp.in_flight >= c.max_in_flight) return false;
  return policy_->may_launch(cp.gpu);
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
    if (const SimTime coll = c.program.steps[step].collective_ns; coll > 0) {
      // The collective starts once the slowest shard has finished this step, and every shard
      // goes on when it ends; the others idle until then.
      const auto key = std::make_pair(inst, step);
      auto& arr = c.collective_arrived[key];
      if (arr.at.empty()) arr.at.assign(c.copies.size(), kNever);
      arr.at[copy] = now_;
      if (++arr.count == c.copies.size()) {
        for (uint32_t j = 0; j < c.copies.size(); ++j) c.copies[j].collective_wait_ns += now_ - arr.at[j];
        c.collective_arrived.erase(key);
        Client* cl = &c;
        post(coll, [this, cl, inst, step] {
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
    if (c.llm) llm_step_done(c);
    else finish_request(c);
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
  const SimTime lead = runtime_use_ ? runtime_use_->early_lead : 0;
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
  if (runtime_use_ && runtime_use_->hints)
    feed(sched::event::RequestStarted{c.key, c.arrived_hinted++, sched::RequestSource::kHint});
  online_opened(c);
  if (c.llm) {
    llm_arrive(c);
    return;
  }
  c.waiting.push_back(now_);
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
  if (runtime_use_ && runtime_use_->hints)
    feed(sched::event::RequestFinished{c.key, c.current - 1, sched::RequestSource::kHint});
  online_closed(c);
  c.busy = false;
  if (all_served()) {
    stop_ = true;
    return;
  }
  if (!c.waiting.empty()) start_request(c);
}

bool Simulation::all_served() const {
  bool all = true, any = false;
  for (const auto& x : clients_)
    if (x.online && x.max_requests) {
      any = true;
      all &= x.completed >= *x.max_requests;
    }
  return any && all;
}

void Simulation::online_opened(const Client& c) {
  for (uint32_t g : c.gpus)
    if (online_open_[g]++ == 0) online_open_changed(g);
}

void Simulation::online_closed(const Client& c) {
  for (uint32_t g : c.gpus)
    if (--online_open_[g] == 0) online_open_changed(g);
}

void Simulation::online_open_changed(uint32_t g) { policy_->online_pending(g, online_open_[g] > 0); }

}  // namespace gpreempt::eval::des::detail
