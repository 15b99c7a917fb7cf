#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

// ---- the Runtime --------------------------------------------------------------------------

void Simulation::feed(const sched::Event& e) { runtime_->dispatch(to_sched(now_), e); }

void Simulation::record_decision(const sched::Action& a) {
  if (!spec_.record.decisions) return;
  const auto index = [this](sched::GpuId id) {
    return static_cast<uint32_t>(std::find(gpu_ids_.begin(), gpu_ids_.end(), id) - gpu_ids_.begin());
  };
  if (const auto* s = std::get_if<sched::action::Suspend>(&a)) {
    Decision d{now_, index(s->gpu), "suspend", {}, sched::to_string(s->reason)};
    for (const auto& k : s->targets) d.targets.push_back(names_[k]);
    res_.decisions.push_back(std::move(d));
  } else if (const auto* r = std::get_if<sched::action::Resume>(&a)) {
    Decision d{now_, index(r->gpu), "resume", {}, sched::to_string(r->reason)};
    for (const auto& k : r->targets) d.targets.push_back(names_[k]);
    res_.decisions.push_back(std::move(d));
  }
  // PriorityOnly cannot happen: every simulated GPU supports suspend.
}

void Simulation::arm_timer(std::optional<sched::Time> at) {
  const uint64_t gen = ++timer_gen_;  // a newer arm (or a disarm) cancels the one pending
  if (at)
    post_at(at->count(), [this, gen] {
      if (gen == timer_gen_) feed(sched::event::TimerFired{});
    });
}

void Simulation::poll_queues() {
  // The transparent trigger as gpreemptd runs it: each online queue's read and write pointers,
  // read every poll interval, go to the Runtime, whose ActivityDetector infers the requests and
  // kernel lengths. A queue's packets are its jobs: the read pointer counts those retired,
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
    runtime_->queues_sampled(to_sched(now_), c.key, samples);
  }
}

}  // namespace gpreempt::eval::des::detail
