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
  // Off by default (opt-in): these files are the user's own, so the names they give are the
  // user's claims, and reading them means root opening files in directories a user controls
  // (docs/security.md). To turn them on: Podman's default rootless graphroot
  // "%h/.local/share/containers/storage" (containers-storage.conf(5): rootless_storage_path);
  // containerd-rootless.sh's "/run/user/%U/containerd/io.containerd.runtime.v2.task" (it
  // bind-mounts $XDG_RUNTIME_DIR/containerd on the namespace's /run/containerd).
  std::string podman_rootless;
  std::string containerd_rootless;
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
  // Members of this group (besides root) may change state over the socket (`gpreempt ctl`) and
  // see every process in `status`.
  std::string control_group;
  // What one local user can hold of the socket (docs/gpreemptd.md, "The socket's limits"): open
  // connections per uid; a connection that sends nothing this long is closed; hints (`begin`,
  // `expect`) per connection: a token bucket of `hint_burst` tokens refilled at `hint_rate` per
  // second.
  uint32_t max_connections_per_uid = 128;
  Duration idle_timeout = std::chrono::minutes(10);
  uint32_t hint_rate = 5000;
  uint32_t hint_burst = 1000;
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

ConfigResult load_config(std::string_view text, const std::string& file_name);

// Who may write gpreemptd's config decides who preempts whom: "" when a file owned by `owner` with
// mode `mode` (st_mode) may configure a daemon running as `daemon_euid`, else why not. The owner
// must be root or the daemon's own user (an unprivileged daemon in tests and the simulator reads
// its own files); nobody else may write it (no group or world write bit).
std::string config_file_problem(std::uint32_t owner, std::uint32_t mode, std::uint32_t daemon_euid);

// Reads and loads `path` (opened once: the owner and mode checked are the text's); an unreadable
// or untrusted file (config_file_problem, for the caller's effective uid) is one error with line 0.
ConfigResult check_config(const std::string& path);

}  // namespace gpreempt::sched
