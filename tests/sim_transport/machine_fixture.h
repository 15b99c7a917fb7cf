// Test support: a private simulated machine (its own KFDSIM_DIR, so tests run in parallel) and
// scriptable processes running under the shim on it.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::testing {

// A child process with its stdin and stdout connected to us.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void send(const std::string& line);
  // The next stdout line; nullopt if none arrives within `wait` (or the child closed stdout).
  std::optional<std::string> line(std::chrono::milliseconds wait = std::chrono::seconds(20));
  // send + line; throws std::runtime_error naming the command when no answer comes.
  std::string call(const std::string& command);
  // Closes stdin and waits for the exit status (as waitpid reports it).
  int finish();
  void kill(int sig);
  int wait_status();
  pid_t pid() const { return pid_; }
  // Everything the child wrote to stdout and has not been consumed as a line.
  std::string rest();

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

// Daemons (kfdsimd) serving `dir` or a directory inside it, found by their "--dir=" argument: also
// those that no longer answer on their socket.
std::vector<int> daemons_in(const std::filesystem::path& dir);

class Machine {
 public:
  // Extra KFDSIM_* variables (e.g. {"KFDSIM_KFD_MINOR", "12"}) configure an on-demand daemon.
  explicit Machine(std::map<std::string, std::string> extra_env = {});
  ~Machine();

  const std::filesystem::path& dir() const { return dir_; }
  std::map<std::string, std::string> env() const;  // LD_PRELOAD, KFDSIM_DIR, KFDSIM_DAEMON, extras
  std::unique_ptr<Child> probe();                   // kfd_probe under the shim
  std::unique_ptr<Child> spawn(const std::vector<std::string>& argv);

  // Inspection requests straight to the daemon (nullopt: no daemon answers).
  std::optional<nlohmann::json> status() const;
  std::optional<nlohmann::json> queues() const;
  // The GPU model's counters, queues and runlist records (what `kfdsim stats --json` prints).
  std::optional<nlohmann::json> gpu_stats() const;
  // Waits until pred(queues()) holds; false if it never does within 20 s.
  bool wait_queues(const std::function<bool(const nlohmann::json&)>& pred) const;
  // Waits until no daemon answers and its process is gone; false after 20 s.
  bool wait_daemon_gone(int daemon_pid) const;

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::string> extra_;
};

std::filesystem::path build_path(const std::string& relative);  // under GPREEMPT_BINARY_DIR

}  // namespace gpreempt::testing
