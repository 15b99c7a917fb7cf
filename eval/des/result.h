// The RESULT document of gpreempt-des (schemas/des-result.schema.json, docs/evaluation-des.md):
// the spec echoed, one summary row (the harness's table row), and the raw material of figures —
// latencies, the timeline of kernels and suspension windows, the decisions.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "eval/des/simulation.h"
#include "eval/des/spec.h"

namespace gpreempt::eval::des {

struct RunInfo {
  std::optional<double> solo_p50_ms;  // the online clients alone (spec "solo": true)
  std::optional<double> wall_seconds;  // null when the caller wants byte-identical output
};

nlohmann::ordered_json result_document(const Spec& spec, const RunResult& r, const RunInfo& info);

}  // namespace gpreempt::eval::des
