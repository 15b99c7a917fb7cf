// Reading a TOML config section by section with every problem reported as `file:line: message`
// (config.h's ConfigError): typed reads of a key that record what was wrong at the key's line and
// return nullopt. The scheduler's loader (config.cpp: [[class]], [policy]) and gpreemptd's
// ([daemon], gpreemptd/daemon_config.h) both read through it, so one file's errors read alike.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/config.h"
#include "sched/time.h"

namespace gpreempt::sched {

int line_of(const toml::node& n);
int line_of(const toml::key& k);
// "a string", "an integer", ... for messages.
const char* type_name(const toml::node& n);

class TomlFields {
 public:
  explicit TomlFields(std::string file) : file_(std::move(file)) {}
  // The problems found so far, in the order found.
  std::vector<ConfigError>& errors() { return errors_; }

 protected:
  void error(int line, std::string message);
  const toml::table* table(const toml::key& k, const toml::node& v);
  std::optional<std::string> string(const toml::key& k, const toml::node& v, bool allow_empty = false);
  std::optional<int64_t> integer(const toml::key& k, const toml::node& v);
  // A number of `unit`s, 0 to 1,000,000.
  std::optional<Duration> duration(const toml::key& k, const toml::node& v, Duration unit);

  std::string file_;
  std::vector<ConfigError> errors_;
};

}  // namespace gpreempt::sched
