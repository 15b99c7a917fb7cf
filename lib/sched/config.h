// gpreemptd's configuration file (TOML): the classes and their rules, the policy knobs, the
// daemon's settings. docs/scheduler.md is the reference for every key.
//
// load_config takes text (no I/O) and reports every problem as `file:line: message` — syntax
// errors with toml++'s position, and semantic ones (unknown key, duplicate class, bad glob,
// priority out of range, unknown trigger, bad value) at the line of the offending key.
// check_config(path) reads the file: it is what `gpreemptd --check-config FILE` calls.
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

// Where the container runtimes keep the files that name their containers
// (gpreemptd/container_resolver.h); empty: that runtime is not looked at.
struct ContainerRoots {
  std::string docker = "/var/lib/docker/containers";
  std::string containerd = "/run/containerd/io.containerd.runtime.v2.task";
  std::string crio = "/run/containers/storage/overlay-containers";
  // containers/storage's graphroot, where rootful Podman's containers.json is.
  std::string podman = "/var/lib/containers/storage";
  // Per user, for containers in a cgroup under user@UID.service (rootless): templates with %h
  // (the user's home directory), %u (the user's name), %U (the uid), %% (a '%').
  // Podman's default rootless graphroot (containers-storage.conf(5): rootless_storage_path);
  // containerd-rootless.sh bind-mounts $XDG_RUNTIME_DIR/containerd on the namespace's
  // /run/containerd.
  std::string podman_rootless = "%h/.local/share/containers/storage";
  std::string containerd_rootless = "/run/user/%U/containerd/io.containerd.runtime.v2.task";
  bool operator==(const ContainerRoots&) const = default;
};

// A per-user root template: "" when valid (an absolute path once expanded: it starts with '/' or
// "%h"; only the specifiers above), else what is wrong with it.
std::string check_user_root(std::string_view tmpl);
// The template with the user's values; nullopt when it needs %h or %u and `user`/`home` are empty
// (the daemon could not look the uid up).
std::optional<std::string> expand_user_root(std::string_view tmpl, std::uint32_t uid,
                                            const std::string& user, const std::string& home);

struct DaemonSettings {
  std::string socket_path = "/run/gpreempt/gpreemptd.sock";
  std::string metrics_address = "127.0.0.1:9464";  // empty: no metrics endpoint
  // Members of this group (besides root) may change state over the socket (`gpreempt ctl`).
  std::string control_group;
  // Transparent trigger: how often the queue pointers of online processes are read.
  Duration poll_interval = std::chrono::microseconds(200);
  static constexpr Duration kMinPollInterval = std::chrono::microseconds(100);
  static constexpr Duration kMaxPollInterval = std::chrono::microseconds(500);
  // SCHED_FIFO priority (1..99) of the two threads on the hint-to-SUSPEND path, the event loop and
  // the core's control thread; 0: they keep the process's normal policy. On a busy node their
  // wake-ups otherwise wait behind the workloads for the host's CPU scheduler (docs/gpreemptd.md).
  int realtime_priority = 0;
  static constexpr int kMaxRealtimePriority = 99;
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
