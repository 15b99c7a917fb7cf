// Command-line conventions shared by every executable of the project (gpreempt, kfdsim, kfdsimd,
// gpreempt-workload): `--version` prints the project version from the one generated header, and
// numeric range checks fail with one short sentence — CLI11's own Range/PositiveNumber print the
// bounds of the option's whole type (for a double: two 300-digit numbers).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <sstream>
#include <string>

#include "gpreempt/version.h"

namespace gpreempt::cli_common {

// "--version" → "<program> <major.minor.patch>", exit 0.
inline void add_version_flag(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", program + " " + GPREEMPT_VERSION_STRING,
                       "Print the version and exit");
}

template <typename T>
std::string number_text(T v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The one range validator: `ok` decides, `want` completes "must be ...", `shown` is the short
// form in --help. A failure reads "--pid: 0 is out of range: must be at least 1".
template <typename T>
CLI::Validator number_check(std::function<bool(T)> ok, const std::string& want,
                            const std::string& shown) {
  return CLI::Validator(
      [ok, want](std::string& input) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(input, value)) return "\"" + input + "\" is not a number";
        if (!ok(value)) return input + " is out of range: must be " + want;
        return {};
      },
      shown);
}

template <typename T>
CLI::Validator in_range(T min, T max) {
  return number_check<T>([min, max](T v) { return v >= min && v <= max; },
                         "between " + number_text(min) + " and " + number_text(max),
                         number_text(min) + ".." + number_text(max));
}

template <typename T>
CLI::Validator at_least(T min) {
  return number_check<T>([min](T v) { return v >= min; }, "at least " + number_text(min),
                         ">=" + number_text(min));
}

// Strictly above zero (durations, rates).
inline CLI::Validator positive() {
  return number_check<double>([](double v) { return v > 0; }, "greater than 0", ">0");
}

}  // namespace gpreempt::cli_common
