// Attack: gpreemptd, which holds CAP_SYS_PTRACE, is asked (a GPU process it classified, an
// operator's `ctl suspend --pid`) to ptrace a process the kernel would keep an ordinary debugger
// away from: the node's init, a set-user-ID program, a process that made itself non-dumpable, a
// pid namespace's init. The tracer refuses all of them itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/error.h"
#include "ptrace/target_policy.h"
#include "ptrace/tracer.h"

namespace gpreempt::ptrace {
namespace {

std::string status(const std::string& uid, const std::string& gid, const std::string& nspid) {
  return "Name:\tx\nTgid:\t50\nNSpid:\t" + nspid + "\nPid:\t50\nUid:\t" + uid + "\nGid:\t" + gid +
         "\n";
}

TEST(PtraceRefusals, WhatTheRuleRefuses) {
  const std::string plain = status("1000\t1000\t1000\t1000", "100\t100\t100\t100", "50");
  EXPECT_EQ(ptrace_refusal(50, plain, 1000), "");
  EXPECT_NE(ptrace_refusal(1, plain, 1000).find("node's init"), std::string::npos);
  EXPECT_NE(ptrace_refusal(50, plain, 0).find("not dumpable"), std::string::npos);
  EXPECT_NE(ptrace_refusal(50, status("1000\t0\t0\t0", "100\t100\t100\t100", "50"), 0)
                .find("set-user-ID"),
            std::string::npos);
  EXPECT_NE(ptrace_refusal(50, status("1000\t1000\t1000\t1000", "100\t5\t5\t5", "50"), 1000)
                .find("set-group-ID"),
            std::string::npos);
  EXPECT_NE(
      ptrace_refusal(50, status("1000\t1000\t1000\t1000", "100\t100\t100\t100", "50\t1"), 1000)
          .find("init of a pid namespace"),
      std::string::npos);
  EXPECT_EQ(
      ptrace_refusal(50, status("1000\t1000\t1000\t1000", "100\t100\t100\t100", "50\t7"), 1000),
      "");
  EXPECT_NE(ptrace_refusal(50, "Name:\tx\n", 0), "");
}

// A child that makes itself what `setup` says, then waits to be killed.
struct Child {
  pid_t pid = -1;
  template <typename F>
  explicit Child(F setup) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      setup();
      if (::write(ready[1], "x", 1) != 1) _exit(1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char c;
    if (::read(ready[0], &c, 1) != 1) pid = -1;
    ::close(ready[0]);
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// The errno of seizing `pid` (0: it was seized, then let go).
int seize_errno(int pid, std::string* message) {
  auto tracer = make_linux_tracer();
  try {
    tracer->seize(pid);
  } catch (const Error& e) {
    *message = e.what();
    return e.code();
  }
  if (!tracer->detach(pid))
    while (!tracer->finish_detach(pid)) ::usleep(1000);
  return 0;
}

TEST(PtraceRefusals, TheTracerRefusesInitAndNonDumpableAndSetuidProcesses) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (CAP_SYS_PTRACE), as gpreemptd runs";
  std::string why;
  EXPECT_EQ(seize_errno(1, &why), EPERM);
  EXPECT_NE(why.find("init"), std::string::npos) << why;

  // Another user's process, dumpable: traced (the refusals below are not a blanket no).
  Child plain([] {
    if (::setresuid(65534, 65534, 65534) != 0) _exit(1);
    ::prctl(PR_SET_DUMPABLE, 1);  // a uid change made it non-dumpable; an exec would undo that
  });
  ASSERT_GT(plain.pid, 0);
  EXPECT_EQ(seize_errno(plain.pid, &why), 0) << why;

  Child private_one([] {
    if (::setresuid(65534, 65534, 65534) != 0) _exit(1);
    ::prctl(PR_SET_DUMPABLE, 0);
  });
  ASSERT_GT(private_one.pid, 0);
  EXPECT_EQ(seize_errno(private_one.pid, &why), EPERM);
  EXPECT_NE(why.find("not dumpable"), std::string::npos) << why;

  Child setuid_like([] {
    if (::setresuid(65534, 0, 0) != 0) _exit(1);  // real 65534, effective root
    ::prctl(PR_SET_DUMPABLE, 1);
  });
  ASSERT_GT(setuid_like.pid, 0);
  EXPECT_EQ(seize_errno(setuid_like.pid, &why), EPERM);
  EXPECT_NE(why.find("set-user-ID"), std::string::npos) << why;
}

}  // namespace
}  // namespace gpreempt::ptrace
