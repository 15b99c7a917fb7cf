// The conventions every JSON document of gpreempt follows (docs/json.md): the CLI's --json
// output, the C ABI's and the Python module's inspection documents, the simulator's stats.
// One place for them so that a command cannot drift: keys are snake_case and carry their unit
// (`_us`, `_ms`, `_bytes`, `_mhz`); ids are JSON numbers; addresses are "0x…" strings (a JSON
// number loses precision above 2^53); durations are rounded to a stated resolution; every
// document starts with "schema_version"; every failure is one {"error": {...}} object.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpreempt::json_conventions {

// Raised when a key is renamed, removed or changes type (docs/json.md, "Versioning"). Adding a
// key does not raise it: readers ignore keys they do not know.
inline constexpr int kSchemaVersion = 2;

// "0x1a2b…": lower case, no padding.
std::string address(std::uint64_t value);
nlohmann::ordered_json address_or_null(const std::optional<std::uint64_t>& value);

// `value` rounded half away from zero to `decimals` decimal places.
double round_to(double value, int decimals);
// Milliseconds and microseconds keep 3 decimals (1 us and 1 ns): finer digits are timer noise.
inline double round_ms(double ms) {
  return round_to(ms, 3);
}
inline double round_us(double us) {
  return round_to(us, 3);
}

// "ENOENT" for ENOENT; "E<number>" for a value without a name.
std::string errno_name(int errno_value);

// {"code": ..., "errno": N or null, "message": ...}: the value of "error" in a failure document.
// `code` is a stable snake_case word programs switch on ("failed", "usage", "internal") or, when
// the failure has an errno, its name ("ESRCH").
nlohmann::ordered_json error_object(std::string_view code, std::optional<int> errno_value,
                                    std::string_view message);

// `body` with "schema_version" as its first key (`body` must be an object or null).
template <class Json>
Json document(const Json& body) {
  Json doc = Json::object();
  doc["schema_version"] = kSchemaVersion;
  if (body.is_object())
    for (auto it = body.begin(); it != body.end(); ++it)
      if (it.key() != "schema_version") doc[it.key()] = it.value();
  return doc;
}

}  // namespace gpreempt::json_conventions
