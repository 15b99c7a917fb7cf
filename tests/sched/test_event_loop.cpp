// lib/common's event loop (kfdsimd runs on it; gpreemptd will): fds, timers, signals, and
// callbacks that remove watches — their own or others in the same batch.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "common/event_loop.h"
#include "common/loop_inbox.h"

namespace gpreempt {
namespace {

struct Pipe {
  int fd[2];
  Pipe() { EXPECT_EQ(pipe(fd), 0); }
  ~Pipe() {
    close(fd[0]);
    close(fd[1]);
  }
  void poke() { EXPECT_EQ(write(fd[1], "x", 1), 1); }
  void drain() {
    char c;
    EXPECT_EQ(read(fd[0], &c, 1), 1);
  }
};

TEST(EventLoop, ReadableFdRunsItsCallbackAndAfterBatch) {
  EventLoop loop;
  Pipe p;
  int calls = 0, batches = 0;
  loop.watch(p.fd[0], [&] {
    p.drain();
    if (++calls == 2)
      loop.stop();
    else
      p.poke();
  });
  loop.set_after_batch([&] { ++batches; });
  p.poke();
  loop.run();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(batches, 2);
}

TEST(EventLoop, ACallbackMayRemoveItselfAndOthersInTheSameBatch) {
  EventLoop loop;
  Pipe a, b;
  int a_calls = 0, b_calls = 0;
  EventLoop::Id ida = 0, idb = 0;
  // Whichever runs first removes both: the other's ready event in this batch is dropped.
  ida = loop.watch(a.fd[0], [&] {
    ++a_calls;
    loop.unwatch(ida);
    loop.unwatch(idb);
  });
  idb = loop.watch(b.fd[0], [&] {
    ++b_calls;
    loop.unwatch(idb);
    loop.unwatch(ida);
  });
  auto stopper = loop.add_timer([&] { loop.stop(); });
  a.poke();
  b.poke();
  loop.set_after_batch([&] { loop.arm_at(stopper, EventLoop::TimePoint{}); });
  loop.run();
  EXPECT_EQ(a_calls + b_calls, 1);
}

TEST(EventLoop, TimersFireOnceWhenArmedAndNotWhenDisarmed) {
  EventLoop loop;
  int fired = 0, disarmed = 0;
  auto t = loop.add_timer([&] { ++fired; });
  auto never = loop.add_timer([&] { ++disarmed; });
  auto stop = loop.add_timer([&] { loop.stop(); });
  loop.arm_at(never, std::chrono::steady_clock::now());
  loop.arm_at(never, std::nullopt);
  loop.arm_at(t, EventLoop::TimePoint{});  // in the past: fires at once
  loop.arm_at(stop, std::chrono::steady_clock::now());
  loop.run();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(disarmed, 0);
}

TEST(EventLoop, PeriodicTimerKeepsFiring) {
  EventLoop loop;
  int ticks = 0;
  auto t = loop.add_timer([&] {
    if (++ticks == 3) loop.stop();
  });
  loop.arm_every(t, std::chrono::milliseconds(1));
  loop.run();
  EXPECT_EQ(ticks, 3);
}

TEST(EventLoop, SignalsArriveThroughTheLoop) {
  EventLoop loop;
  int got = 0;
  loop.on_signals({SIGUSR1}, [&](int signo) {
    got = signo;
    loop.stop();
  });
  ASSERT_EQ(raise(SIGUSR1), 0);  // blocked now: it waits for the signalfd
  loop.run();
  EXPECT_EQ(got, SIGUSR1);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

// gpreemptd's discovery worker hands its results to the loop thread this way: each function runs
// on the loop's thread, in the order posted, however many arrive before the loop wakes.
TEST(LoopInbox, FunctionsPostedFromAnotherThreadRunOnTheLoopThreadInOrder) {
  EventLoop loop;
  LoopInbox inbox(loop);
  constexpr int kPosts = 1000;
  std::vector<int> got;
  int elsewhere = 0;
  const auto loop_thread = std::this_thread::get_id();
  std::thread poster([&] {
    for (int i = 0; i < kPosts; ++i)
      inbox.post([&, i] {
        got.push_back(i);
        if (std::this_thread::get_id() != loop_thread) ++elsewhere;
        if (i == kPosts - 1) loop.stop();
      });
  });
  loop.run();
  poster.join();
  EXPECT_EQ(elsewhere, 0);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kPosts));
  for (int i = 0; i < kPosts; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i);
}

}  // namespace
}  // namespace gpreempt
