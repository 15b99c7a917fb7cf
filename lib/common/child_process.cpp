#include "common/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/child_reaper.h"
#include "common/error.h"

extern char** environ;

namespace gpreempt {

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error(EINVAL, "no program to start");
  for (const auto& a : argv) command_line_ += (command_line_.empty() ? "" : " ") + a;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(errno, "pipe for " + argv[0] + ": " + errno_text(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw Error(rc, "cannot start " + argv[0] + ": " + errno_text(rc));
  }
  stdout_fd_ = fds[0];
  track_child(pid_);
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    untrack_child(pid_);
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

int ChildProcess::wait() {
  if (!reaped_) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
      if (n > 0) {
        output_.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    untrack_child(pid_);
    reaped_ = true;
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return 1;
}

}  // namespace gpreempt
