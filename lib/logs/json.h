// JSON forms of lib/logs results (`gpreempt log analyze|compare --json`, `--config`).
#pragma once

#include <nlohmann/json.hpp>

#include "logs/hip_log_analyzer.h"
#include "logs/log_compare.h"

namespace gpreempt::logs {

nlohmann::ordered_json to_json(const LogSummary& s);
nlohmann::ordered_json to_json(const LogComparison& c);
nlohmann::ordered_json to_json(const QueueConfig& c);

}  // namespace gpreempt::logs
