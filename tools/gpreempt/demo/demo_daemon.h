// The demo's gpreemptd: a child process with a config the demo writes into its work dir (its own
// socket; the online class matched by the online workload's command line, the offline class by
// GPREEMPT_CLASS=offline in the offline workload's environment). Every policy number is the
// daemon's own default unless the user overrides it: lib/sched's ArbiterConfig is the one owner.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/child_process.h"

namespace gpreempt::demo {

struct DaemonSetup {
  std::string program;         // the gpreemptd executable
  std::string work_dir;        // config, socket
  std::string name;            // the scenario: file names
  std::string online_cmdline;  // glob over the online workload's command line
  std::string trigger;         // "hint" or "transparent"
  // [policy] keys written only when set (docs/scheduler.md).
  std::optional<double> resume_after_idle_ms;
  std::optional<double> max_suspension_ms;
  std::optional<double> grace_default_us;
};

// The TOML the daemon gets (also what tests and the docs show).
std::string daemon_config(const DaemonSetup& s, const std::string& socket_path);

class DemoDaemon {
 public:
  // Writes the config, starts gpreemptd and waits until its socket answers hello. Throws
  // gpreempt::Error with the daemon's exit code when it ends first, ETIMEDOUT after `timeout`.
  explicit DemoDaemon(const DaemonSetup& setup,
                      std::chrono::seconds timeout = std::chrono::seconds(60));
  ~DemoDaemon();
  DemoDaemon(const DemoDaemon&) = delete;
  DemoDaemon& operator=(const DemoDaemon&) = delete;

  const std::string& socket() const { return socket_; }
  pid_t pid() const { return child_.pid(); }
  // The status document (docs/gpreemptd.md).
  nlohmann::ordered_json status() const;
  // Waits until the daemon has put `pid` in `class_name` (it lists GPU processes every 20 ms).
  void wait_classified(int pid, const std::string& class_name,
                       std::chrono::seconds timeout = std::chrono::seconds(30)) const;
  // SIGTERM (the daemon resumes everything), then its exit code (the same again on later calls).
  int stop();

 private:
  std::string config_path_;
  std::string socket_;
  ChildProcess child_;
  bool stopped_ = false;
  int exit_code_ = 0;
};

}  // namespace gpreempt::demo
