// gpreemptd's configuration file (TOML): the classes and their rules, the policy knobs, the
// daemon's settings. docs/scheduler.md is the reference for every key.
//
// load_config takes text (no I/O) and reports every problem as `file:line: message` — syntax
// errors with toml++'s position, and semantic ones (unknown key, duplicate class, bad glob,
// priority out of range, unknown trigger, bad value) at the line of the offending key.
// check_config(path) reads the file: it is what `gpreemptd --check-config FILE` calls.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/arbiter_config.h"
#include "sched/classifier.h"
#include "sched/time.h"

namespace gpreempt::sched {

// Where the container runtimes keep the files that name their containers
// (gpreemptd/container_resolver.h); empty: that runtime is not looked at.
struct ContainerRoots {
  std::string docker = "/var/lib/docker/containers";
  std::string containerd = "/run/containerd/io.containerd.runtime.v2.task";
  std::string crio = "/run/containers/storage/overlay-containers";
  bool operator==(const ContainerRoots&) const = default;
};

struct DaemonSettings {
  std::string socket_path = "/run/gpreempt/gpreemptd.sock";
  std::string metrics_address = "127.0.0.1:9464";  // empty: no metrics endpoint
  // Members of this group (besides root) may change state over the socket (`gpreempt ctl`).
  std::string control_group;
  // Transparent trigger: how often the queue pointers of online processes are read.
  Duration poll_interval = std::chrono::microseconds(200);
  static constexpr Duration kMinPollInterval = std::chrono::microseconds(100);
  static constexpr Duration kMaxPollInterval = std::chrono::microseconds(500);
  ContainerRoots containers;
};

struct Config {
  std::vector<ClassRule> classes;
  ArbiterConfig policy;
  DaemonSettings daemon;
  std::string source;  // file name the config came from ("built-in" for the defaults)
};

// With no config file: classes `online` (priority 10, hint and transparent triggers) and `offline`
// (priority 0), matched by the environment variable GPREEMPT_CLASS=online / =offline. A config
// file that defines no [[class]] keeps these.
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
};

ConfigResult load_config(std::string_view text, const std::string& file_name);
// Reads and loads `path`; an unreadable file is one error with line 0.
ConfigResult check_config(const std::string& path);

}  // namespace gpreempt::sched
