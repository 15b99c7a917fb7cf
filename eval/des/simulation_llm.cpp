// Online clients that are LLM servers (spec online[].llm, docs/llm.md "The DES form"). A request
// is open from its arrival to its last token: the hint trigger brackets it so, and requests
// overlap (the Runtime counts the open ones). The server runs one step at a time: each step's
// kernels go to the client's queue as one instance of its program, and when the last has finished
// the step's tokens are sampled, finished requests close, and after the host's step gap the next
// step is formed from whatever has arrived by then.
#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

namespace {
// What `python3 -m gpreempt.sim.serve --hint` reports of a request's tokens: the first, then the
// count every this many (its TOKEN_REPORT_EVERY), and the count with its end. The scheduler takes
// TTFT and TPOT from them, and a `late` protection the decode pace (lib/sched/request_tokens.h).
constexpr uint32_t kTokenReportEvery = 16;
}  // namespace

void Simulation::llm_arrive(Client& c) {
  c.llm->arrive(now_);
  if (!c.busy) llm_start_step(c);
}

void Simulation::llm_start_step(Client& c) {
  c.busy = true;
  c.llm_step_started = now_;
  c.program = c.llm->next_step(profile_);
  index_program(c);
  const uint64_t inst = c.current++;
  for (auto& cp : c.copies) start_instance(c, cp, inst);
}

void Simulation::llm_step_done(Client& c) {
  c.llm_step_ms.push_back(static_cast<double>(now_ - c.llm_step_started) / 1e6);
  const bool hints = runtime_use_ && runtime_use_->hints;
  std::vector<uint32_t> sampled;  // the requests this step gives a token, before it is counted
  if (hints)
    for (const auto& w : c.llm->current().work)
      if (w.samples) sampled.push_back(w.request);
  const std::vector<uint32_t> finished = c.llm->step_done(now_);
  for (uint32_t id : sampled) {
    const uint32_t n = c.llm->request(id).generated;
    if (n == 1 || n % kTokenReportEvery == 0)
      feed(sched::event::RequestProgress{c.key, id, n, /*at_end=*/false});
  }
  for (uint32_t id : finished) {
    const double ms = c.llm->request(id).e2e_ms();
    c.latencies_ms.push_back(ms);
    if (spec_.record.latencies) res_.latencies_ms.push_back(ms);
    ++c.completed;
    if (hints) {
      feed(sched::event::RequestProgress{c.key, id, c.llm->request(id).generated, /*at_end=*/true});
      feed(sched::event::RequestFinished{c.key, id, sched::RequestSource::kHint});
    }
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
