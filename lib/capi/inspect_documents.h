// The inspection documents (decode, log analysis, queue map) as the C ABI (inspect.h) and the
// Python module return them: the same JSON the CLI prints with --json, plus whether the input was
// complete. One builder for both bindings so they cannot drift apart. Pure: text in, JSON out.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpreempt::inspect {

struct Document {
  nlohmann::ordered_json json;
  bool complete = true;  // false: partial document; json["diagnostics"] (or truncated_record) says why
};

// kind: "properties", "mqds", "hqds" or "rls"; anything else throws gpreempt::Error(EINVAL).
Document decode(std::string_view kind, std::string_view text, std::string_view display_name);

// `gpreempt log analyze --json` of one file: {"schema_version", "files": [{"file": display_name,
// ...summary}]}. Incomplete when a record was longer than the analyzer's cap and was cut.
Document analyze_log(std::string_view text, std::string_view display_name, std::optional<int> pid);

struct MapTexts {
  std::optional<std::string_view> mqds, hqds, rls, log;
  std::optional<int> pid;
};

// `gpreempt map --offline --json` over the given texts. Needs mqds or hqds (else
// gpreempt::Error(EINVAL)): without them there is no queue to put in a row.
Document queue_map(const MapTexts& texts);

}  // namespace gpreempt::inspect
