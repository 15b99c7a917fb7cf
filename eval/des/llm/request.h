// One serving request of the DES's LLM server and its timestamps (simulated ns): TTFT (arrival to
// first token), TPOT (mean time between its output tokens, (last − first) / (outputs − 1), as
// vLLM's benchmark and DistServe define it), end-to-end latency (arrival to last token). Port of
// bindings/python/gpreempt/sim/llm/request.py.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/gpu/profile.h"

namespace gpreempt::eval::des::llm {

struct Request {
  uint32_t id = 0;
  sim::gpu::SimTime arrival = 0;
  uint32_t prompt_len = 0;
  uint32_t output_len = 0;
  uint32_t computed = 0;   // tokens whose keys and values are in the cache
  uint32_t generated = 0;  // output tokens sampled so far
  uint32_t preemptions = 0;
  std::optional<sim::gpu::SimTime> first_token, last_token;

  // Tokens the model must have computed before it samples the next one.
  uint32_t tokens() const { return prompt_len + generated; }
  bool done() const { return generated == output_len; }
  void emit(sim::gpu::SimTime now) {
    if (!first_token) first_token = now;
    last_token = now;
    ++generated;
  }
  double ttft_ms() const { return static_cast<double>(*first_token - arrival) / 1e6; }
  // A one-token request has no TPOT.
  std::optional<double> tpot_ms() const {
    if (output_len < 2) return std::nullopt;
    return static_cast<double>(*last_token - *first_token) / 1e6 / (output_len - 1);
  }
  double e2e_ms() const { return static_cast<double>(*last_token - arrival) / 1e6; }
};

}  // namespace gpreempt::eval::des::llm
