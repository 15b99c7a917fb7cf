// Continuous batching as vLLM's V1 scheduler does it, as pure logic (no model, no clock): the C++
// form of bindings/python/gpreempt/sim/llm/scheduler.py, the live server's. Both must form the same
// steps from the same requests: tests/python/test_llm_des_parity.py feeds one request script to
// each and compares the step sequences (docs/llm.md, "Scheduler").
//
// Every step: the RUNNING requests first, in admission order, each given the tokens it lacks (one
// for a decode, the next chunk of its prompt for a prefill) within the step's token budget
// (max_num_batched_tokens: chunked prefill); then WAITING requests in arrival order while the batch
// has fewer than max_num_seqs requests and budget remains. KV blocks grow with computed tokens:
//  * a waiting request whose blocks cannot be allocated stays waiting and admission stops for this
//    step (none is skipped over, none dropped);
//  * a running request that cannot grow preempts the most recently admitted running request
//    (recompute: its blocks are freed, it returns to the front of the waiting queue), or itself
//    when it is the last one; no request is admitted in a step that preempted.
// A request samples one token in every step that brings its computed tokens up to prompt +
// generated (the end of its prompt, then every decode).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "eval/des/llm/kv_blocks.h"
#include "eval/des/llm/request.h"

namespace gpreempt::eval::des::llm {

struct Limits {
  uint32_t max_num_seqs = 256;
  uint32_t max_num_batched_tokens = 8192;
};

// One sequence of a step: its request (an index into the requests the scheduler was given), the
// tokens computed now, the tokens already cached, and whether it samples a token after the step.
struct Work {
  uint32_t request = 0;
  uint32_t n_new = 0;
  uint32_t ctx = 0;
  bool samples = false;
};

struct Batch {
  std::vector<Work> work;
  std::vector<uint32_t> preempted;
  uint32_t tokens() const {
    uint32_t n = 0;
    for (const auto& w : work) n += w.n_new;
    return n;
  }
};

class Scheduler {
 public:
  // `requests` outlives the scheduler; add() refers to its entries by index.
  Scheduler(std::vector<Request>& requests, KvBlocks kv, Limits limits);

  // Queue request `i`; std::invalid_argument if it could never fit the KV cache alone.
  void add(uint32_t i);
  bool idle() const { return waiting_.empty() && running_.empty(); }
  // The next step (empty when nothing can run).
  Batch schedule();
  // Account for `b` having run, its results read at `now`; returns the requests that finished.
  std::vector<uint32_t> complete(const Batch& b, sim::gpu::SimTime now);

  const KvBlocks& kv() const { return kv_; }
  std::size_t waiting() const { return waiting_.size(); }
  std::size_t running() const { return running_.size(); }
  uint64_t preemptions() const { return preemptions_; }

 private:
  void preempt(uint32_t victim);

  std::vector<Request>& requests_;
  KvBlocks kv_;
  Limits limits_;
  std::deque<uint32_t> waiting_;
  std::vector<uint32_t> running_;  // admission order
  uint64_t preemptions_ = 0;
};

}  // namespace gpreempt::eval::des::llm
