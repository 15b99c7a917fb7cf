// A child program whose standard output we keep (JSON results of workloads, experiment runs).
// stderr is inherited so that a child's diagnostics reach the user as they happen.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gpreempt {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH when it has no '/'). Throws gpreempt::Error naming the
  // program when it cannot be started.
  explicit ChildProcess(const std::vector<std::string>& argv);
  // Kills (SIGKILL) and reaps a child that is still running. Until reaped, the child is recorded
  // for kill_children_on_termination (common/child_reaper.h).
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Reads stdout to its end and reaps the child. Returns the exit code, or 128 + signal number.
  int wait();
  // Everything the child wrote to stdout (complete after wait()).
  const std::string& output() const { return output_; }
  // "name arg1 arg2" for messages.
  const std::string& command_line() const { return command_line_; }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string output_;
  std::string command_line_;
};

}  // namespace gpreempt
