// The DES's LLM server: requests of given lengths, the continuous-batching scheduler
// (scheduler.h) and the step grid (step_grid.h). The Simulation drives it (simulation_llm.cpp):
// arrive() when a request arrives, next_step() for the kernels of the step to launch, step_done()
// when the step's last kernel has finished. One step runs at a time, as a vLLM engine core runs
// them; a request that arrives during a step joins at the next one.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "eval/des/llm/scheduler.h"
#include "eval/des/llm/step_grid.h"
#include "eval/des/program.h"
#include "eval/des/spec.h"

namespace gpreempt::eval::des::llm {

class Server {
 public:
  // `requests` of `def.lengths` (the first ones) will arrive. `coll` times a sharded grid's
  // collectives (a tensor-parallel server's).
  Server(const LlmServerDef& def, uint64_t requests, std::shared_ptr<const StepGrid> grid,
         CollectiveCost coll = {});
  Server(const Server&) = delete;  // the scheduler refers to requests_
  Server& operator=(const Server&) = delete;

  // The next request arrives at `now`; returns its index.
  uint32_t arrive(sim::gpu::SimTime now);
  bool idle() const { return sched_.idle(); }
  // Forms the next step and returns its kernels timed on `p`. Throws std::runtime_error if no
  // step can be formed while requests wait (the scheduler's add() refuses any that never fit).
  const Program& next_step(const sim::gpu::GpuProfile& p);
  // The step's sampled tokens are read at `now`: the requests it finished.
  std::vector<uint32_t> step_done(sim::gpu::SimTime now);

  // The step last formed by next_step() (its requests, and which of them sample a token).
  const Batch& current() const { return current_; }
  const Request& request(uint32_t i) const { return requests_.at(i); }
  const std::vector<Request>& requests() const { return requests_; }
  uint64_t steps() const { return steps_; }
  uint64_t preemptions() const { return sched_.preemptions(); }
  uint64_t batched_tokens() const { return tokens_; }

 private:
  std::vector<Request> requests_;
  uint32_t arrived_ = 0;
  Scheduler sched_;
  std::shared_ptr<const StepGrid> grid_;
  bool merge_vector_kernels_ = true;
  CollectiveCost coll_;
  Batch current_;
  uint64_t steps_ = 0, tokens_ = 0;
  // Steps of the same shape recur (decode steps of a steady batch): their programs are kept.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, Program> programs_;
};

}  // namespace gpreempt::eval::des::llm
