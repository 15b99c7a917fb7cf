#include "common/json_conventions.h"

#include "common/hex.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace gpreempt::json_conventions {

std::string address(std::uint64_t value) { return hex(value); }

nlohmann::ordered_json address_or_null(const std::optional<std::uint64_t>& value) {
  return value ? nlohmann::ordered_json(address(*value)) : nlohmann::ordered_json(nullptr);
}

double round_to(double value, int decimals) {
  if (!std::isfinite(value)) return value;
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

std::string errno_name(int errno_value) {
  if (const char* n = ::strerrorname_np(errno_value)) return n;
  return "E" + std::to_string(errno_value);
}

nlohmann::ordered_json error_object(std::string_view code, std::optional<int> errno_value,
                                    std::string_view message) {
  return {{"code", std::string(code)},
          {"errno",
           errno_value ? nlohmann::ordered_json(*errno_value) : nlohmann::ordered_json(nullptr)},
          {"message", std::string(message)}};
}

}  // namespace gpreempt::json_conventions
