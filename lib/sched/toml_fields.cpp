#include "sched/toml_fields.h"

#include <cmath>

namespace gpreempt::sched {

int line_of(const toml::node& n) {
  return static_cast<int>(n.source().begin.line);
}
int line_of(const toml::key& k) {
  return static_cast<int>(k.source().begin.line);
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    default:
      return "a date/time";
  }
}


void TomlFields::error(int line, std::string message) {
  errors_.push_back({file_, line, std::move(message)});
}

const toml::table* TomlFields::table(const toml::key& k, const toml::node& v) {
  if (auto* t = v.as_table()) return t;
  error(line_of(k), "'" + std::string(k.str()) + "' must be a table, not " + type_name(v));
  return nullptr;
}

std::optional<std::string> TomlFields::string(const toml::key& k, const toml::node& v,
                                            bool allow_empty) {
  auto s = v.value<std::string>();
  if (!v.is_string() || !s) {
    error(line_of(k), "'" + std::string(k.str()) + "' must be a string, not " + type_name(v));
    return std::nullopt;
  }
  if (!allow_empty && s->empty()) {
    error(line_of(k), "'" + std::string(k.str()) + "' must not be empty");
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> TomlFields::integer(const toml::key& k, const toml::node& v) {
  if (!v.is_integer()) {
    error(line_of(k), "'" + std::string(k.str()) + "' must be an integer, not " + type_name(v));
    return std::nullopt;
  }
  return v.value<int64_t>();
}

std::optional<Duration> TomlFields::duration(const toml::key& k, const toml::node& v, Duration unit) {
  if (!v.is_integer() && !v.is_floating_point()) {
    error(line_of(k), "'" + std::string(k.str()) + "' must be a number, not " + type_name(v));
    return std::nullopt;
  }
  double x = *v.value<double>();
  if (!std::isfinite(x) || x < 0 || x > 1e6) {
    error(line_of(k), "'" + std::string(k.str()) + "' must be between 0 and 1000000");
    return std::nullopt;
  }
  return Duration(static_cast<int64_t>(std::llround(x * static_cast<double>(unit.count()))));
}

}  // namespace gpreempt::sched
