// common/child_reaper.h: a program that asked for it kills the children it started when it is
// terminated, then dies of the same signal; a signal it ignored stays ignored.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/child_process.h"
#include "common/child_reaper.h"
#include "fixtures.h"

namespace {

// Waits up to 5 s for the process to end (gone, or an unreaped zombie).
bool gone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (gpreempt::testing::process_ended(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Forks a program that ignores SIGHUP, installs the handlers, starts `sleep 60` and reports its
// pid on a pipe. Returns {program, sleep}.
std::pair<pid_t, pid_t> start_program() {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, -1};
  const pid_t program = ::fork();
  if (program == 0) {
    ::close(fds[0]);
    ::signal(SIGHUP, SIG_IGN);
    gpreempt::kill_children_on_termination();
    gpreempt::ChildProcess sleeper({"sleep", "60"});
    const pid_t pid = sleeper.pid();
    if (::write(fds[1], &pid, sizeof pid) != sizeof pid) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  pid_t sleeper = -1;
  if (::read(fds[0], &sleeper, sizeof sleeper) != sizeof sleeper) sleeper = -1;
  ::close(fds[0]);
  return {program, sleeper};
}

}  // namespace

TEST(ChildReaper, TerminationKillsTheChildrenThenTheProgramDiesOfTheSignal) {
  for (int sig : {SIGTERM, SIGINT}) {
    const auto [program, sleeper] = start_program();
    ASSERT_GT(program, 0);
    ASSERT_GT(sleeper, 0);
    ::kill(program, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(program, &status, 0), program);
    ASSERT_TRUE(WIFSIGNALED(status)) << "signal " << sig;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(gone(sleeper)) << "the child outlived the program (signal " << sig << ")";
  }
}

TEST(ChildReaper, AnIgnoredSignalStaysIgnored) {
  const auto [program, sleeper] = start_program();
  ASSERT_GT(program, 0);
  ASSERT_GT(sleeper, 0);
  // No sleep needed: an ignored signal is discarded when sent, and had a handler been installed
  // the pending SIGHUP (the lowest number) would be delivered before SIGTERM and end the program
  // with SIGHUP.
  ::kill(program, SIGHUP);
  ::kill(program, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(program, &status, 0), program);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << "SIGHUP was ignored before: it must not end the program (status " << status << ")";
  EXPECT_TRUE(gone(sleeper));
}

TEST(ChildReaper, ATargetIsRecordedUntilUntracked) {
  // The table frees a slot when a target is untracked: many more than 256 come and go.
  for (pid_t p = 1000000; p < 1000000 + 1000; ++p) {
    ASSERT_TRUE(gpreempt::track_child(p));
    gpreempt::untrack_child(p);
  }
}
