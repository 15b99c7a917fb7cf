// Online clients that are LLM servers (spec online[].llm, docs/llm.md "The DES form"). A request
// is open from its arrival to its last token: the hint trigger brackets it so, and requests
// overlap (the Runtime counts the open ones). The server runs one step at a time: each step's
// kernels go to the client's queue as one instance of its program, and when the last has finished
// the step's tokens are sampled, finished requests close, and after the host's step gap the next
// step is formed from whatever has arrived by then.
#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

void Simulation::llm_arrive(Client& c) {
  c.llm->arrive(now_);
  if (!c.busy) llm_start_step(c);
}

void Simulation::llm_start_step(Client& c) {
  c.busy = true;
  c.program = c.llm->next_step(profile_);
  index_program(c);
  const uint64_t inst = c.current++;
  for (auto& cp : c.copies) start_instance(c, cp, inst);
}

void Simulation::llm_step_done(Client& c) {
  for (uint32_t id : c.llm->step_done(now_)) {
    const double ms = c.llm->request(id).e2e_ms();
    c.latencies_ms.push_back(ms);
    if (spec_.record.latencies) res_.latencies_ms.push_back(ms);
    ++c.completed;
    if (runtime_use_ && runtime_use_->hints)
      feed(sched::event::RequestFinished{c.key, id, sched::RequestSource::kHint});
    online_closed(c);
  }
  if (all_served()) {
    stop_ = true;
    return;
  }
  if (c.llm->idle()) {
    c.busy = false;
    return;
  }
  Client* cl = &c;
  post(c.llm_step_gap_ns, [this, cl] { llm_start_step(*cl); });
}

}  // namespace gpreempt::eval::des::detail
