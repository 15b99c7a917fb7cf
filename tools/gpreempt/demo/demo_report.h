// What `gpreempt demo` prints: each scenario's figures as a JSON object, and the whole run as a
// table for people. An LLM server's scenarios (gpreempt.sim.serve's document) get TTFT, TPOT and
// output tokens/s in place of the request latency percentiles; an LLM fine-tuning job's
// (gpreempt.sim.finetune's) gets its training tokens/s beside its iterations/s.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "demo/demo_scenarios.h"

namespace gpreempt::demo {

// One scenario's entry of the --json document's "scenarios".
nlohmann::json scenario_json(const ScenarioResult& s);

// The human report of a whole --json document (machine, workloads, scenarios).
std::string human_report(const nlohmann::json& j);

}  // namespace gpreempt::demo
