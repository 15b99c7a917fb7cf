// JSON forms of lib/logs results (`gpreempt log analyze|compare --json`, `--config`).
#pragma once

#include <optional>

#include <string_view>

#include <nlohmann/json.hpp>

#include "logs/hip_log_analyzer.h"
#include "logs/log_compare.h"

namespace gpreempt::logs {

nlohmann::ordered_json to_json(const LogSummary& s);
// One entry of the "files" list of `log analyze --json` (one document shape for 1 or N files):
// {"file": name, ...to_json(s)}.
// One file's entry of `log analyze`: its name, the summary and the notes (`pid`: the filter the
// summary was made with).
nlohmann::ordered_json file_json(std::string_view name, const LogSummary& s, std::optional<int> pid);
nlohmann::ordered_json to_json(const LogComparison& c);
nlohmann::ordered_json to_json(const QueueConfig& c);

}  // namespace gpreempt::logs
