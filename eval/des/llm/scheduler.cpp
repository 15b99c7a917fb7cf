#include "eval/des/llm/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpreempt::eval::des::llm {

Scheduler::Scheduler(std::vector<Request>& requests, KvBlocks kv, Limits limits)
    : requests_(requests), kv_(kv), limits_(limits) {
  if (limits.max_num_seqs < 1 || limits.max_num_batched_tokens < 1)
    throw std::invalid_argument("max_num_seqs and max_num_batched_tokens must be positive");
}

void Scheduler::add(uint32_t i) {
  const Request& r = requests_.at(i);
  const uint64_t need = kv_.blocks_for(r.prompt_len + r.output_len - 1);
  if (need > kv_.blocks())
    throw std::invalid_argument("request " + std::to_string(r.id) + " needs " + std::to_string(need) +
                                " KV blocks, the cache has " + std::to_string(kv_.blocks()));
  waiting_.push_back(i);
}

void Scheduler::preempt(uint32_t victim) {
  running_.erase(std::find(running_.begin(), running_.end(), victim));
  kv_.release(victim);
  Request& r = requests_[victim];
  r.computed = 0;  // recompute: its prompt and generated tokens are prefilled again
  ++r.preemptions;
  ++preemptions_;
  waiting_.push_front(victim);
}

Batch Scheduler::schedule() {
  uint32_t budget = limits_.max_num_batched_tokens;
  Batch b;
  for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
    const uint32_t id = running_[i];
    Request& r = requests_[id];
    const uint32_t n = std::min(r.tokens() - r.computed, budget);
    bool evicted_self = false;
    while (!kv_.grow(id, r.computed + n)) {
      const uint32_t victim = running_.back();
      preempt(victim);
      b.preempted.push_back(victim);
      if (victim == id) {
        evicted_self = true;
        break;
      }
    }
    if (evicted_self) break;
    b.work.push_back({id, n, r.computed, r.computed + n == r.tokens()});
    budget -= n;
  }
  while (!waiting_.empty() && b.preempted.empty() && budget > 0 && running_.size() < limits_.max_num_seqs) {
    const uint32_t id = waiting_.front();
    Request& r = requests_[id];
    const uint32_t n = std::min(r.tokens() - r.computed, budget);
    if (!kv_.grow(id, r.computed + n)) break;
    waiting_.pop_front();
    running_.push_back(id);
    b.work.push_back({id, n, r.computed, r.computed + n == r.tokens()});
    budget -= n;
  }
  return b;
}

std::vector<uint32_t> Scheduler::complete(const Batch& b, sim::gpu::SimTime now) {
  std::vector<uint32_t> done;
  for (const auto& w : b.work) {
    Request& r = requests_[w.request];
    r.computed += w.n_new;
    if (w.samples) {
      r.emit(now);
      if (r.done()) done.push_back(w.request);
    }
  }
  for (uint32_t id : done) {
    running_.erase(std::find(running_.begin(), running_.end(), id));
    kv_.release(id);
  }
  return done;
}

}  // namespace gpreempt::eval::des::llm
