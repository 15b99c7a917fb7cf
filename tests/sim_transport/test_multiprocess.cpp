// Several processes on one simulated machine, with the real ptrace relation between them
// (FACTS §7 step 6, §8 SUSPEND/RESUME, §9 lifetime).
#include <gtest/gtest.h>
#include <signal.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "machine_fixture.h"
#include "sim/protocol/messages.h"
#include "sim/protocol/socket_io.h"

using gpreempt::testing::Child;
using gpreempt::testing::Machine;

namespace {

std::string first_field(const std::string& s) { return s.substr(0, s.find(' ')); }

// A target with two queues whose runtime is enabled (as ROCr does before its first queue).
struct Target {
  std::unique_ptr<Child> p;
  std::string pid;
  explicit Target(Machine& m) : p(m.probe()) {
    pid = first_field(p->call("getpid"));
    EXPECT_EQ(first_field(p->call("open")).substr(0, 1) == "-", false);
    EXPECT_EQ(p->call("runtime_enable"), "0 0");
    EXPECT_EQ(p->call("create"), "0 0 0");
    EXPECT_EQ(p->call("create"), "0 0 1");
  }
};

// A debugger that seized the target's main thread and enabled debugging on it.
std::unique_ptr<Child> attach(Machine& m, const Target& t) {
  auto d = m.probe();
  d->call("open");
  EXPECT_EQ(d->call("seize " + t.pid), "0 0");
  EXPECT_EQ(d->call("enable " + t.pid), "0 0 1 16") << "runtime ENABLED, rinfo_size 16";
  // New queues carry EC_QUEUE_NEW and cannot be suspended until a snapshot clears it.
  EXPECT_EQ(d->call("snapshot " + t.pid), "0 0 2 1 0") << "newest first";
  return d;
}

// A thread of the process sits in recvfrom or ppoll (x86_64 syscalls 45 and 271): the shim sent a
// request and waits for the daemon's answer.
bool thread_waiting_for_daemon(const std::string& pid) {
  for (int i = 0; i < 2000; ++i) {
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator("/proc/" + pid + "/task", ec)) {
      std::ifstream f(t.path() / "syscall");
      std::string nr;
      f >> nr;
      if (nr == "45" || nr == "271") return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool all_suspended(const nlohmann::json& q, bool want) {
  if (q.empty()) return false;
  for (const auto& e : q)
    if (e["suspended"].get<bool>() != want) return false;
  return true;
}

}  // namespace

TEST(MultiProcess, TracerSuspendsAndResumesTargetQueues) {
  Machine m;
  Target t(m);
  auto d = attach(m, t);
  EXPECT_EQ(d->call("suspend " + t.pid + " 0 1"), "2 0 0x0 0x1 ");
  auto q = m.queues();
  ASSERT_TRUE(q);
  EXPECT_TRUE(all_suspended(*q, true)) << q->dump();
  EXPECT_EQ(d->call("suspend " + t.pid + " 0 7"), "1 0 0x0 0x80000007 ")
      << "already suspended counts; unknown id gets bit 31";
  EXPECT_EQ(d->call("resume " + t.pid + " 0 1"), "2 0 0x0 0x1 ");
  EXPECT_TRUE(all_suspended(*m.queues(), false));
}

TEST(MultiProcess, WithoutPtraceEnableIsEperm) {
  Machine m;
  Target t(m);
  auto d = m.probe();
  d->call("open");
  EXPECT_EQ(d->call("enable " + t.pid), "-1 1 0 16");
}

TEST(MultiProcess, ThreadOtherThanTracerIsEperm) {
  // The kernel compares the tracer with the calling *thread*: the tracer's sibling thread fails.
  Machine m;
  Target t(m);
  auto d = m.probe();
  d->call("open");
  ASSERT_EQ(d->call("seize " + t.pid), "0 0");
  EXPECT_EQ(d->call("thread enable " + t.pid).substr(0, 4), "-1 1");
  EXPECT_EQ(d->call("enable " + t.pid).substr(0, 4), "0 0 ");
}

TEST(MultiProcess, SigkillOfDebuggerResumesTargetQueues) {
  Machine m;
  Target t(m);
  auto d = attach(m, t);
  ASSERT_EQ(d->call("suspend " + t.pid + " 0 1"), "2 0 0x0 0x1 ");
  d->kill(SIGKILL);
  d->wait_status();
  EXPECT_TRUE(m.wait_queues([](const nlohmann::json& q) { return all_suspended(q, false); }))
      << m.queues()->dump();
}

TEST(MultiProcess, ClosingDebuggerFdChangesNothing) {  // FACTS §3, §9
  Machine m;
  Target t(m);
  auto d = attach(m, t);
  ASSERT_EQ(d->call("suspend " + t.pid + " 0 1"), "2 0 0x0 0x1 ");
  EXPECT_EQ(d->call("close"), "0 0");
  // The debugger is still alive: its queues stay suspended (checked after a full round trip).
  EXPECT_EQ(t.p->call("version"), "0 0 1 22");
  EXPECT_TRUE(all_suspended(*m.queues(), true));
}

TEST(MultiProcess, DestroyOfSuspendedQueueBlocksUntilResume) {
  Machine m;
  Target t(m);
  auto d = attach(m, t);
  ASSERT_EQ(d->call("suspend " + t.pid + " 0"), "1 0 0x0 ");
  t.p->send("destroy 0");
  // The destroy is blocked in the daemon; the debugger's own calls are not held up meanwhile.
  EXPECT_EQ(d->call("snapshot " + t.pid).substr(0, 5), "0 0 2");
  EXPECT_FALSE(t.p->line(std::chrono::milliseconds(200))) << "destroy returned while suspended";
  EXPECT_EQ(d->call("resume " + t.pid + " 0"), "1 0 0x0 ");
  auto done = t.p->line();
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, "0 0");
  EXPECT_TRUE(m.wait_queues([](const nlohmann::json& q) { return q.size() == 1; }));
}

namespace {

// A process debugging itself (no ptrace: a ptrace-stopped tracee would not run its handler) with
// one queue, suspended; `sigrestart` gives SIGUSR1's handler SA_RESTART.
std::unique_ptr<Child> self_debugged_with_suspended_queue(Machine& m, std::string& pid,
                                                          bool sigrestart) {
  auto p = m.probe();
  pid = first_field(p->call("getpid"));
  p->call("open");
  if (sigrestart) {
    EXPECT_EQ(p->call("sigrestart"), "0 0");
  }
  EXPECT_EQ(p->call("runtime_enable"), "0 0");
  EXPECT_EQ(p->call("create"), "0 0 0");
  EXPECT_EQ(p->call("enable 0"), "0 0 1 16");
  EXPECT_EQ(p->call("snapshot 0"), "0 0 1 0");
  EXPECT_EQ(p->call("suspend 0 0"), "1 0 0x0 ");
  return p;
}

}  // namespace

TEST(MultiProcess, ASignalEndsADestroyWaitingForItsSuspendedQueue) {
  // wait_on_destroy_queue sleeps interruptibly: -ERESTARTSYS, which a handler without SA_RESTART
  // sees as EINTR. The queue stays (marked as being destroyed).
  Machine m;
  std::string pid;
  auto p = self_debugged_with_suspended_queue(m, pid, false);
  p->send("bg destroy 0");
  ASSERT_TRUE(thread_waiting_for_daemon(pid)) << "the destroy never reached its wait";
  p->kill(SIGUSR1);  // only the "bg" thread accepts it
  auto done = p->line();
  ASSERT_TRUE(done) << "the signal did not end the destroy";
  EXPECT_EQ(*done, "bg -1 4");
  EXPECT_EQ(p->call("resume 0 0"), "1 0 0x0 ");
  EXPECT_EQ(m.queues()->size(), 1u) << "the interrupted destroy removed nothing";
  EXPECT_EQ(p->call("destroy 0"), "0 0");
}

TEST(MultiProcess, ASignalWithSaRestartDoesNotEndTheDestroy) {
  // With SA_RESTART the kernel restarts the ioctl after -ERESTARTSYS, which waits again: the
  // destroy completes when the queue is resumed, with its real result.
  Machine m;
  std::string pid;
  auto p = self_debugged_with_suspended_queue(m, pid, true);
  p->send("bg destroy 0");
  ASSERT_TRUE(thread_waiting_for_daemon(pid)) << "the destroy never reached its wait";
  p->kill(SIGUSR1);
  while (p->call("sigcount") != "1 0") {
  }
  ASSERT_TRUE(thread_waiting_for_daemon(pid));
  p->send("resume 0 0");
  auto a = p->line(), b = p->line();
  ASSERT_TRUE(a && b);
  std::set<std::string> got{*a, *b};
  EXPECT_EQ(got, (std::set<std::string>{"1 0 0x0 ", "bg 0 0"}));
}

namespace {

// A process debugging itself whose RUNTIME_ENABLE waits for the debugger (down_interruptible)
// takes SIGUSR1, its handler with or without SA_RESTART: what the call answered.
std::optional<std::string> runtime_enable_after_a_signal(bool sigrestart) {
  Machine m;
  auto p = m.probe();
  std::string pid = first_field(p->call("getpid"));
  p->call("open");
  if (sigrestart) {
    EXPECT_EQ(p->call("sigrestart"), "0 0");
  }
  EXPECT_EQ(p->call("enable 0"), "0 0 0 16") << "runtime DISABLED";
  p->send("bg runtime_enable");
  EXPECT_TRUE(thread_waiting_for_daemon(pid)) << "the runtime enable never reached its wait";
  p->kill(SIGUSR1);
  return p->line();
}

}  // namespace

TEST(MultiProcess, ASignalEndsARuntimeEnableWaitingForTheDebugger) {
  // runtime_enable's down_interruptible: EINTR; the next RUNTIME_ENABLE waits again.
  EXPECT_EQ(runtime_enable_after_a_signal(false), "bg -1 4") << "nothing, or not EINTR";
}

TEST(MultiProcess, ASignalEndsARuntimeEnableEvenWithSaRestart) {
  // down_interruptible returns -EINTR, not -ERESTARTSYS: the kernel does not restart the ioctl
  // after an SA_RESTART handler, so the caller sees EINTR all the same.
  EXPECT_EQ(runtime_enable_after_a_signal(true), "bg -1 4") << "nothing, or not EINTR";
}

TEST(MultiProcess, TargetExitDestroysItsQueues) {
  Machine m;
  Target t(m);
  auto other = m.probe();  // keeps the machine alive after the target is gone
  other->call("open");
  ASSERT_EQ(m.queues()->size(), 2u);
  t.p->finish();
  EXPECT_TRUE(m.wait_queues([](const nlohmann::json& q) { return q.empty(); }));
}

TEST(MultiProcess, BlockedThreadDoesNotHoldUpItsSiblings) {
  // Each thread has its own daemon connection: while one thread waits in a blocked destroy, the
  // process's other threads keep issuing ioctls.
  Machine m;
  Target t(m);
  auto d = attach(m, t);
  ASSERT_EQ(d->call("suspend " + t.pid + " 1"), "1 0 0x1 ");
  t.p->send("bg destroy 1");
  EXPECT_EQ(t.p->call("version"), "0 0 1 22");
  EXPECT_EQ(t.p->call("create"), "0 0 2");
  EXPECT_EQ(d->call("resume " + t.pid + " 1"), "1 0 0x1 ");
  auto done = t.p->line();
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, "bg 0 0");
}

TEST(MultiProcess, ExecEndsTheKfdProcess) {  // FACTS §3: the kfd_process lives until exit or exec
  Machine m;
  auto p = m.probe();
  p->call("open");
  ASSERT_EQ(p->call("create"), "0 0 0");
  std::string pid = first_field(p->call("getpid"));
  ASSERT_EQ(p->call("exec"), "0 0");
  EXPECT_TRUE(m.wait_queues([](const nlohmann::json& q) { return q.empty(); }));
  EXPECT_EQ(first_field(p->call("getpid")), pid) << "same process, new image";
  p->call("open");
  EXPECT_EQ(p->call("create"), "0 0 0") << "a fresh kfd_process: queue ids start over";
}

TEST(Multiprocess, AClientThatReadsNoAnswersDoesNotStallTheOthers) {
  // A client that sends request after request and reads none of the answers fills its
  // connection's send buffer in the daemon. The daemon's loop must not wait for it to make room:
  // another client's `queues` is answered, and the stuck client is the one cut off.
  Machine m;
  auto first = m.probe();  // starts the (on-demand) daemon and keeps it up
  first->call("open");
  const int stuck = gpreempt::sim::protocol::connect_unix((m.dir() / "kfdsim.sock").string());
  ASSERT_GE(stuck, 0);
  const auto request = gpreempt::sim::protocol::encode(
      gpreempt::sim::protocol::Request{gpreempt::sim::protocol::Op::kStatus, ::getpid(), ::gettid(), 0, {}});
  // Far more answers than the daemon's send buffer holds; sent without waiting (the daemon
  // takes requests only as fast as it answers them), until the daemon hangs up on us.
  int sent = 0;
  for (int tries = 0; sent < 4000 && tries < 200000; ++tries) {
    const ssize_t n = ::send(stuck, request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) break;  // EPIPE: cut off
    if (n < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    ++sent;
  }
  // `kfdsim queues`, with a bounded wait for the answer.
  const int other = gpreempt::sim::protocol::connect_unix((m.dir() / "kfdsim.sock").string());
  ASSERT_GE(other, 0);
  timeval wait{20, 0};
  ::setsockopt(other, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  const auto query = gpreempt::sim::protocol::encode(
      gpreempt::sim::protocol::Request{gpreempt::sim::protocol::Op::kQueues, ::getpid(), ::gettid(), 0, {}});
  ASSERT_EQ(gpreempt::sim::protocol::send_message(other, query), 0);
  std::vector<uint8_t> answer;
  EXPECT_EQ(gpreempt::sim::protocol::recv_message(other, answer), 0)
      << "the daemon stopped answering while one client read no answers (" << sent << " requests sent)";
  ::close(other);
  ::close(stuck);
  EXPECT_EQ(first->call("create"), "0 0 0") << "the well-behaved client lost its daemon";
}

// ---- WAIT_EVENTS sleeps in kfdsimd (docs/kfd-interface.md#events) -------------------------------
// The probe's answer to "wait": "<ret> <errno> <wait_result> <timeout copied back>"; wait_result
// 0 COMPLETE, 1 TIMEOUT, 2 FAIL. 4294967295 is the kernel's infinite timeout.

namespace {

struct EventProbe {
  Machine m;
  std::unique_ptr<Child> p = m.probe();
  std::string pid = first_field(p->call("getpid"));
  EventProbe() { EXPECT_EQ(first_field(p->call("open")).substr(0, 1) == "-", false); }
  std::string event(const std::string& mode = "") {
    std::string r = p->call("event " + mode);
    EXPECT_EQ(r.substr(0, 4), "0 0 ");
    return r.substr(4);
  }
  // Sets the event while a "bg" wait sleeps on it: the set's answer and the woken wait's, in
  // either order (empty when the wait did not answer).
  std::set<std::string> set_waking(const std::string& ev) {
    p->send("set " + ev);
    std::set<std::string> got;
    for (int i = 0; i < 2; ++i)
      if (auto l = p->line()) got.insert(*l);
    return got;
  }
};

}  // namespace

TEST(EventWait, AWaitSleepsUntilAnotherThreadSetsTheEvent) {
  EventProbe e;
  const std::string ev = e.event();
  e.p->send("bg wait 0 4294967295 " + ev);
  ASSERT_TRUE(thread_waiting_for_daemon(e.pid)) << "the wait never went to sleep";
  EXPECT_EQ(e.set_waking(ev), (std::set<std::string>{"0 0", "bg 0 0 0 4294967295"}))
      << "the set did not wake the sleeping wait";
  EXPECT_EQ(e.p->call("wait 0 0 " + ev), "0 0 1 0") << "the auto-reset event was taken by the wait";
}

TEST(EventWait, ATimeoutEndsTheWaitWithTimeout) {
  EventProbe e;
  const std::string ev = e.event();
  EXPECT_EQ(e.p->call("wait 0 0 " + ev), "0 0 1 0") << "timeout 0: the answer now";
  EXPECT_EQ(e.p->call("wait 0 5 " + ev), "0 0 1 5") << "nothing set within 5 ms";
  EXPECT_EQ(e.p->call("wait 1 5 " + ev + " " + e.event()), "0 0 1 5");
}

TEST(EventWait, ATimedWaitSleepsUntilTheKernelsTimerFires) {
  // 1 ms is msecs_to_jiffies(1) + 1 = 2 jiffies of 4 ms (HZ 250), and the timer wheel runs the
  // timer one jiffy after it is due: more than 8 ms from anywhere inside the starting jiffy
  // (sim/device/kernel_timer.h). A lower bound only: the host may always add.
  EventProbe e;
  const std::string ev = e.event();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(e.p->call("wait 0 1 " + ev), "0 0 1 1");
  EXPECT_GT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(8));
}

TEST(EventWait, AllWaitsForEveryEventAnyForOne) {
  EventProbe e;
  const std::string a = e.event(), b = e.event();
  e.p->send("bg wait 1 4294967295 " + a + " " + b);
  ASSERT_TRUE(thread_waiting_for_daemon(e.pid));
  EXPECT_EQ(e.p->call("set " + a), "0 0") << "all: one of two is not enough";
  EXPECT_EQ(e.set_waking(b), (std::set<std::string>{"0 0", "bg 0 0 0 4294967295"}));
  e.p->send("bg wait 0 4294967295 " + a + " " + b);
  ASSERT_TRUE(thread_waiting_for_daemon(e.pid));
  EXPECT_EQ(e.set_waking(b), (std::set<std::string>{"0 0", "bg 0 0 0 4294967295"}))
      << "any: one is enough";
}

TEST(EventWait, ASignalWithoutSaRestartEndsTheWaitWithEintr) {
  // The kernel's -ERESTARTSYS: EINTR for a handler without SA_RESTART, the wait's remaining
  // timeout copied back, wait_result FAIL; a set after it is not lost.
  EventProbe e;
  const std::string ev = e.event();
  e.p->send("bg wait 0 600000 " + ev);
  ASSERT_TRUE(thread_waiting_for_daemon(e.pid));
  e.p->kill(SIGUSR1);  // only the "bg" thread accepts it
  auto done = e.p->line();
  ASSERT_TRUE(done) << "the signal did not end the wait";
  ASSERT_EQ(done->substr(0, 10), "bg -1 4 2 ") << *done;
  const unsigned long left = std::stoul(done->substr(10));
  EXPECT_LE(left, 600000u) << "the remaining timeout";
  EXPECT_EQ(left % 4, 0u) << "whole jiffies of 4 ms (the simulated kernel's HZ is 250)";
  EXPECT_EQ(e.p->call("set " + ev), "0 0");
  EXPECT_EQ(e.p->call("wait 0 0 " + ev), "0 0 0 0");
}

TEST(EventWait, ASignalWithSaRestartDoesNotEndTheWait) {
  EventProbe e;
  const std::string ev = e.event();
  ASSERT_EQ(e.p->call("sigrestart"), "0 0");
  e.p->send("bg wait 0 4294967295 " + ev);
  ASSERT_TRUE(thread_waiting_for_daemon(e.pid));
  e.p->kill(SIGUSR1);
  // The handler ran and the thread went back to its wait (a wrongly ended wait answers instead).
  while (e.p->call("sigcount") != "1 0") {
  }
  ASSERT_TRUE(thread_waiting_for_daemon(e.pid));
  EXPECT_EQ(e.set_waking(ev), (std::set<std::string>{"0 0", "bg 0 0 0 4294967295"}));
}

TEST(EventWait, TheKernelsEventPageIsSharedWithTheProcess) {
  // kfd_event_create: a signal event before any event page makes the kernel allocate one (every
  // slot unsignaled), which the process maps through /dev/kfd at the offset CREATE_EVENT gave
  // back (kfd_event_mmap: at most KFD_SIGNAL_EVENT_LIMIT slots). A slot the process (as the GPU
  // would) writes is the kernel's: a wait takes it and acknowledges it.
  EventProbe e;
  const std::string ev = e.event();
  EXPECT_EQ(e.p->call("evpage 36864"), "-1 22") << "more than 4096 slots";
  ASSERT_EQ(e.p->call("evpage 32768"), "0 0");
  EXPECT_EQ(e.p->call("slot " + ev), "0 0 ffffffffffffffff") << "the kernel filled the page";
  EXPECT_EQ(e.p->call("putslot " + ev + " " + ev), "0 0 " + ev);
  EXPECT_EQ(e.p->call("wait 0 0 " + ev), "0 0 0 0") << "the written slot signals the event";
  EXPECT_EQ(e.p->call("slot " + ev), "0 0 ffffffffffffffff") << "acknowledged by the kernel";
}
