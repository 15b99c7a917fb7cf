#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

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

}  // namespace gpreempt::eval::des::detail
