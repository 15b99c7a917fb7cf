// gpreemptd's configuration file as the daemon reads it: the scheduling part ([[class]], [policy]:
// lib/sched/config.h) and the daemon's own [daemon] section — its socket, metrics, control group,
// socket limits, the transparent trigger's poll interval, real-time priority and the container
// runtimes' roots. docs/scheduler.md is the reference for every key; errors are `file:line:`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/activity_detector.h"
#include "sched/config.h"
#include "sched/time.h"

namespace gpreemptd {

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
  gpreempt::sched::Duration idle_timeout = std::chrono::minutes(10);
  uint32_t hint_rate = 5000;
  uint32_t hint_burst = 1000;
  // Transparent trigger: how often the queue pointers of online processes are read.
  gpreempt::sched::Duration poll_interval = gpreempt::sched::kDefaultPollInterval;
  static constexpr gpreempt::sched::Duration kMinPollInterval = std::chrono::microseconds(100);
  static constexpr gpreempt::sched::Duration kMaxPollInterval = std::chrono::microseconds(500);
  // SCHED_FIFO priority (1..99) of the two threads on the hint-to-SUSPEND path, the event loop and
  // the core's control thread; 0: they keep the process's normal policy. On a busy node their
  // wake-ups otherwise wait behind the workloads for the host's CPU scheduler (docs/gpreemptd.md).
  int realtime_priority = 0;
  static constexpr int kMaxRealtimePriority = 99;
  ContainerRoots containers;
};

// The whole file: a scheduling config (its classes, policy, single_tenant) plus [daemon].
struct DaemonConfig : gpreempt::sched::Config {
  DaemonSettings daemon;
};

struct DaemonConfigResult {
  std::optional<DaemonConfig> config;                  // set only when errors is empty
  std::vector<gpreempt::sched::ConfigError> errors;    // in file order
  std::vector<gpreempt::sched::ConfigError> warnings;  // sched::ConfigResult::warnings
};

// The built-in config (sched::builtin_config for `trusted_uid`) and the default [daemon].
DaemonConfig builtin_daemon_config(std::uint32_t trusted_uid);
DaemonConfig builtin_daemon_config();

// Text (no I/O) and a file (sched::read_config_text: opened once, owner and mode checked): what
// `gpreemptd --config` and `--check-config` read.
DaemonConfigResult load_daemon_config(std::string_view text, const std::string& file_name);
DaemonConfigResult check_daemon_config(const std::string& path);

}  // namespace gpreemptd
