// The real ptrace tracer on a child of the test process (the test is both its tracer and its real
// parent, like a controller that launched its own job).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "ptrace/tracer.h"

namespace {

// A child that exits with `code` once `release` (a pipe's write end in the parent) is closed.
pid_t spawn_waiting_child(int code, int& release) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[1]);
    char c;
    while (::read(p[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(code);
  }
  ::close(p[0]);
  release = p[1];
  return pid;
}

}  // namespace

TEST(CoreLinuxTracer, DetachAfterExitLeavesTheStatusToTheRealParent) {
  auto tracer = gpreempt::ptrace::make_linux_tracer();
  int release = -1;
  pid_t child = spawn_waiting_child(7, release);
  ASSERT_GT(child, 0);
  try {
    tracer->seize(child);
  } catch (const std::exception& e) {
    ::close(release);
    ::waitpid(child, nullptr, 0);
    GTEST_SKIP() << "ptrace not permitted here: " << e.what();
  }
  ::close(release);
  // Wait, without consuming it, until the child is a zombie: the detach then meets its exit.
  siginfo_t si{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &si, WEXITED | WNOWAIT | __WALL), 0);
  EXPECT_TRUE(tracer->detach(child));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child) << "the tracer reaped its own child's exit";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(CoreLinuxTracer, DetachLetsTheTargetRunOn) {
  auto tracer = gpreempt::ptrace::make_linux_tracer();
  int release = -1;
  pid_t child = spawn_waiting_child(3, release);
  ASSERT_GT(child, 0);
  try {
    tracer->seize(child);
  } catch (const std::exception& e) {
    ::close(release);
    ::waitpid(child, nullptr, 0);
    GTEST_SKIP() << "ptrace not permitted here: " << e.what();
  }
  EXPECT_TRUE(tracer->detach(child));
  ::close(release);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}
