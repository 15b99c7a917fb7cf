// What an LLM server's run measured, as results.json's `llm` entries and row metrics
// (schemas/des-result.schema.json): TTFT, TPOT and end-to-end latency percentiles, tokens/s, and
// objective attainment both ways — the share of requests that met both objectives (DistServe's
// and vLLM's goodput) and whether the p99s met them (MLPerf's server scenario).
#pragma once

#include <nlohmann/json.hpp>

#include "eval/des/simulation.h"

namespace gpreempt::eval::des::llm {

// `per_request`: also every finished request's lengths and timestamps.
nlohmann::ordered_json metrics(const LlmRow& row, double sim_seconds, bool per_request);

}  // namespace gpreempt::eval::des::llm
