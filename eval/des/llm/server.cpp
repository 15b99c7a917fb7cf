#include "eval/des/llm/server.h"

#include <cmath>
#include <stdexcept>

namespace gpreempt::eval::des::llm {

namespace {

std::vector<Request> make_requests(const LlmServerDef& def, uint64_t n) {
  std::vector<Request> out;
  for (uint64_t i = 0; i < n && i < def.lengths.size(); ++i) {
    Request r;
    r.id = static_cast<uint32_t>(i);
    r.prompt_len = def.lengths[i].first;
    r.output_len = def.lengths[i].second;
    out.push_back(r);
  }
  return out;
}

}  // namespace

Server::Server(const LlmServerDef& def, uint64_t requests, std::shared_ptr<const StepGrid> grid,
               CollectiveCost coll)
    : requests_(make_requests(def, requests)),
      sched_(requests_, KvBlocks(def.kv_blocks, grid->block_size()),
             Limits{def.max_num_seqs, def.max_num_batched_tokens}),
      grid_(std::move(grid)),
      merge_vector_kernels_(def.merge_vector_kernels),
      coll_(coll) {}

uint32_t Server::arrive(sim::gpu::SimTime now) {
  if (arrived_ >= requests_.size()) throw std::logic_error("more arrivals than requests");
  const uint32_t i = arrived_++;
  requests_[i].arrival = now;
  sched_.add(i);
  return i;
}

const Program& Server::next_step(const sim::gpu::GpuProfile& p) {
  current_ = sched_.schedule();
  if (current_.work.empty())
    throw std::runtime_error("the LLM scheduler formed an empty step with " + std::to_string(sched_.waiting()) +
                             " requests waiting and " + std::to_string(sched_.running()) + " running");
  ++steps_;
  tokens_ += current_.tokens();
  StepShape s = step_shape(current_, grid_->block_size(), grid_->decode_groups());
  // Whole tokens of padded length: the key of a recurring shape.
  const auto len = static_cast<uint32_t>(std::lround(s.decode_len));
  s.decode_len = len;
  const auto key = std::make_tuple(s.prefill_tokens, s.decode_seqs, len);
  auto it = programs_.find(key);
  if (it == programs_.end()) {
    if (programs_.size() >= 4096) programs_.clear();
    it = programs_.emplace(key, grid_->program(s, p, merge_vector_kernels_, coll_)).first;
  }
  return it->second;
}

std::vector<uint32_t> Server::step_done(sim::gpu::SimTime now) { return sched_.complete(current_, now); }

}  // namespace gpreempt::eval::des::llm
