// The scheduling part of gpreemptd's configuration file (TOML): the classes and their rules, the
// policy knobs. docs/scheduler.md is the reference for every key.
//
// load_config takes text (no I/O) and reports every problem as `file:line: message` — syntax
// errors with toml++'s position, and semantic ones (unknown key, duplicate class, bad glob,
// priority out of range, unknown trigger, bad value) at the line of the offending key.
// check_config(path) reads the file. gpreemptd's whole file, [daemon] included, is
// gpreemptd/daemon_config.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/arbiter_config.h"
#include "sched/classifier.h"
#include "sched/time.h"

namespace gpreempt::sched {

// The scheduling part of gpreemptd's config: [[class]] and [policy] (the daemon's own [daemon]
// section is gpreemptd's: gpreemptd/daemon_config.h).
struct Config {
  std::vector<ClassRule> classes;
  ArbiterConfig policy;
  // [policy] single_tenant = true: every local user is trusted, so a class that may preempt
  // another may match what a process sets itself (cmdline, exe, env; class_trust.h). Without it
  // such a config is refused; with it, --check-config and `gpreempt doctor` warn.
  bool single_tenant = false;
  std::string source;  // file name the config came from ("built-in" for the defaults)
};

// With no config file: classes `online` (priority 10, hint and transparent triggers) and `offline`
// (priority 0), matched by the environment variable GPREEMPT_CLASS=online / =offline — online only
// for processes of `trusted_uid` (the daemon's own effective uid when gpreemptd builds it), since a
// process chooses its own environment: no other user can make itself online. A config file that
// defines no [[class]] keeps these.
Config builtin_config(std::uint32_t trusted_uid);
// builtin_config for the calling process's effective uid.
Config builtin_config();

struct ConfigError {
  std::string file;
  int line = 0;  // 0: the error concerns the whole file
  std::string message;
  std::string to_string() const;  // "file:line: message" ("file: message" for line 0)
};

struct ConfigResult {
  std::optional<Config> config;     // set only when errors is empty
  std::vector<ConfigError> errors;  // in file order
  // What a valid config trusts that a reviewer should know (single_tenant and what relies on it),
  // for --check-config, the daemon's log and `gpreempt doctor`.
  std::vector<ConfigError> warnings;
};

// The trust warnings of a loaded config (ConfigResult::warnings without line numbers), for a
// running daemon's `status`.
std::vector<std::string> trust_warnings(const Config& c);

// `other_tables`: top-level tables the caller reads itself (gpreemptd: "daemon"); they are neither
// read nor refused here. Any other unknown table is an error naming the expected ones.
ConfigResult load_config(std::string_view text, const std::string& file_name,
                         std::vector<std::string> other_tables = {});

// Who may write gpreemptd's config decides who preempts whom: "" when a file owned by `owner` with
// mode `mode` (st_mode) may configure a daemon running as `daemon_euid`, else why not. The owner
// must be root or the daemon's own user (an unprivileged daemon in tests and the simulator reads
// its own files); nobody else may write it (no group or world write bit).
std::string config_file_problem(std::uint32_t owner, std::uint32_t mode, std::uint32_t daemon_euid);

// The text of `path`, opened once so that the owner and mode checked are the text's; an
// unreadable or untrusted file (config_file_problem, for the caller's effective uid) is one error
// with line 0.
struct ConfigText {
  std::optional<std::string> text;
  std::optional<ConfigError> error;
};
ConfigText read_config_text(const std::string& path);

// read_config_text and load_config.
ConfigResult check_config(const std::string& path, std::vector<std::string> other_tables = {});

}  // namespace gpreempt::sched
