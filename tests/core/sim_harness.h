// Integration-test rig: a private simulated machine (kfdsim start --dir) and real child processes
// running under its LD_PRELOAD shim, driven line by line over pipes. The device's own view
// (`kfdsim queues --json`) is the oracle for "is this queue suspended".
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::testing {

class Child {
 public:
  // Starts argv[0] with extra environment entries ("K=V"); uid >= 0 drops to that uid/gid first.
  // `program`, when given, is the file executed instead, and argv[0] only the name the process
  // shows in its command line (a bare name keeps the checkout path out of it).
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& env, int uid = -1,
        const std::string& program = {});
  ~Child();  // SIGKILL + reap if still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void send(const std::string& line);
  // The next stdout line, or nullopt on EOF/timeout.
  std::optional<std::string> line(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Everything left on stdout until EOF (bounded).
  std::string rest(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Wait for exit; returns the exit code (128+signal when killed), or -1 on timeout.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void kill(int sig);
  std::string stderr_text();

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string buf_;
  int status_ = -1;
  bool reaped_ = false;
};

class Machine {
 public:
  // options: kfdsim start's, e.g. --shared (other uids may use the machine, as a real node's
  // /dev/kfd).
  explicit Machine(const std::vector<std::string>& options = {});
  ~Machine();
  const std::filesystem::path& dir() const { return dir_; }
  // LD_PRELOAD + KFDSIM_DIR for a process on this machine.
  std::vector<std::string> env() const;
  // `kfdsim queues --json`.
  nlohmann::json queues() const;
  // Suspended flag of (pid, queue id) in the device, nullopt when the queue does not exist.
  std::optional<bool> suspended(int pid, uint32_t queue_id) const;
  // Waits (bounded) until the device reports `want` for (pid, queue id).
  bool wait_suspended(int pid, uint32_t queue_id, bool want) const;

 private:
  std::filesystem::path dir_;
};

std::filesystem::path bin(const std::string& name);
// Runs a program to completion: exit code, stdout, stderr.
struct RunResult {
  int code = -1;
  std::string out, err;
};
RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              int uid = -1);

// Whether `uid` may run the build's `program` and load its simulator shim: a checkout in a private
// home (root's is 0700) is out of another user's reach, and the test must skip, not fail.
bool can_run_as(int uid, const std::string& program);

}  // namespace gpreempt::testing
