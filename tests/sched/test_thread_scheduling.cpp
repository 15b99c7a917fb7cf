// common/thread_scheduling: the SCHED_FIFO switch gpreemptd uses for its loop and control threads.
// The kernel is the oracle (sched_getscheduler of each thread). Skips, saying why, where this
// machine does not permit SCHED_FIFO at all.
#include "common/thread_scheduling.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "common/error.h"
#include "realtime.h"

namespace gpreempt {
namespace {

pid_t this_tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

TEST(ThreadScheduling, AThreadGoesUnderFifoAndBackAndWhatItStartsRunsNormally) {
  if (auto why = testing::realtime_unavailable())
    GTEST_SKIP() << "SCHED_FIFO is not permitted here: " << *why;
  int own = -1, started = -1, back = -1;
  std::thread([&] {
    set_thread_realtime_priority(pthread_self(), 5);
    own = thread_realtime_priority(this_tid());
    // SCHED_RESET_ON_FORK: a thread started from a real-time one (gpreemptd's metrics server, a
    // worker) must not inherit the policy and compete with the workloads at real-time priority.
    std::thread([&] { started = thread_realtime_priority(0); }).join();
    set_thread_realtime_priority(pthread_self(), 0);
    back = thread_realtime_priority(this_tid());
  }).join();
  EXPECT_EQ(own, 5);
  EXPECT_EQ(started, 0);
  EXPECT_EQ(back, 0);
}

TEST(ThreadScheduling, APriorityOutOfRangeIsRefusedWithTheRange) {
  try {
    set_thread_realtime_priority(pthread_self(), 100);
    FAIL() << "priority 100 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EINVAL);
    EXPECT_STREQ(e.what(),
                 "real-time priority 100 is not 0 (off) or a SCHED_FIFO priority 1..99");
  }
  EXPECT_EQ(thread_realtime_priority(0), 0) << "the caller's policy is unchanged";
}

// In a child (the death-test fork): without CAP_SYS_NICE in its effective set and with an
// RLIMIT_RTPRIO of 0, whoever runs the test is refused; exits 0 when refused with EPERM.
[[noreturn]] void ask_without_the_capability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct caps[2]{};
  if (::syscall(SYS_capget, &header, caps) == 0) {
    caps[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
    (void)::syscall(SYS_capset, &header, caps);
  }
  rlimit none{0, 0};
  (void)::setrlimit(RLIMIT_RTPRIO, &none);
  try {
    set_thread_realtime_priority(pthread_self(), 7);
    std::fprintf(stderr, "accepted\n");
    std::_Exit(3);
  } catch (const Error& e) {
    std::fprintf(stderr, "%d %s\n", e.code(), e.what());
    std::_Exit(e.code() == EPERM ? 0 : 4);
  }
}

TEST(ThreadScheduling, WithoutTheCapabilityTheErrorSaysWhatGrantsIt) {
  EXPECT_EXIT(ask_without_the_capability(), ::testing::ExitedWithCode(0),
              "cannot run a thread under SCHED_FIFO at priority 7: Operation not permitted \\(it "
              "needs CAP_SYS_NICE, or RLIMIT_RTPRIO of at least 7");
}

}  // namespace
}  // namespace gpreempt
