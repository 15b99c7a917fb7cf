// The preemption core over the fake KFD and a fake tracer: attach/detach order, suspend refreshes
// the snapshot, resume failure → DISABLE, watchdog (injected clock), target exit, control thread.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>

#include "fake_kfd.h"
#include "preempt/context.h"
#include "preempt/control_thread.h"
#include "preempt/signals.h"

using namespace gpreempt;
using namespace gpreempt::kfd;
using gpreempt::testing::FakeKfd;
using gpreempt::testing::FakeTracer;

namespace {

constexpr int kPid = 5151;

struct Fixture {
  FakeKfd fake_kfd;
  FakeTracer fake_tracer;
  FakeKfd* kfd = &fake_kfd;
  FakeTracer* tracer = &fake_tracer;
  std::atomic<int64_t> now_ms{0};
  std::atomic<uint64_t> clock_reads{0};
  std::unique_ptr<preempt::Context> ctx;

  explicit Fixture(std::chrono::milliseconds watchdog = std::chrono::milliseconds(0)) {
    preempt::ContextOptions o;
    o.handle_signals = false;
    o.watchdog_bound = watchdog;
    o.clock = [this] {
      // Counted before the time is read: a read counted after wait_whole_tick() sampled the
      // counter sees the time the test set.
      ++clock_reads;
      return preempt::Clock::time_point(std::chrono::milliseconds(now_ms.load()));
    };
    ctx = std::make_unique<preempt::Context>(
        o, std::make_unique<gpreempt::testing::DriverRef>(fake_kfd),
        std::make_unique<gpreempt::testing::TracerRef>(fake_tracer));
  }
  ~Fixture() { ctx.reset(); }
};

// Wait (bounded) for a condition the control thread establishes asynchronously.
template <class F>
bool eventually(F&& f) {
  for (int i = 0; i < 2000; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return f();
}

// Returns once the control thread has run one whole tick at the time the test set last. With no
// API call in flight only the tick reads the clock (once, for the watchdog), and ticks run one
// after another on the control thread: the second read from now starts after the first tick that
// saw the new time has finished.
void wait_whole_tick(Fixture& f) {
  const uint64_t seen = f.clock_reads.load();
  ASSERT_TRUE(eventually([&] { return f.clock_reads.load() >= seen + 2; }));
}

}  // namespace

TEST(CoreContext, AttachSeizesThenEnablesAndSnapshots) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  EXPECT_TRUE(f.ctx->attached(kPid));
  ASSERT_EQ(f.tracer->log.size(), 1u);
  EXPECT_EQ(f.tracer->log[0], "seize 5151");
  EXPECT_TRUE(f.kfd->proc(kPid).debug_enabled);
  EXPECT_EQ(f.kfd->count_ops(KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT), 1u);
  try {
    f.ctx->attach(kPid);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EALREADY);
  }
}

TEST(CoreContext, FailedSeizeIssuesNoIoctl) {
  Fixture f;
  f.tracer->seize_error[kPid] = EBUSY;
  try {
    f.ctx->attach(kPid);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EBUSY);
  }
  EXPECT_TRUE(f.kfd->ops.empty());
  EXPECT_FALSE(f.ctx->attached(kPid));
}

TEST(CoreContext, FailedEnableDetachesAgain) {
  Fixture f;
  f.kfd->proc(kPid).debug_enabled = true;  // another debugger holds the session
  EXPECT_THROW(f.ctx->attach(kPid), Error);
  ASSERT_EQ(f.tracer->log.size(), 2u);
  EXPECT_EQ(f.tracer->log[1], "detach 5151");
}

TEST(CoreContext, SuspendAllIncludesQueuesCreatedAfterAttach) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  const uint32_t late = f.kfd->create_queue(kPid);  // NEW bit set: invisible until snapshotted
  auto o = f.ctx->suspend(kPid, std::nullopt, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(o.result.count, 2);
  EXPECT_TRUE(o.result.all_done());
  EXPECT_TRUE(f.kfd->suspended(kPid, late));
  auto qs = f.ctx->queues(kPid);
  ASSERT_EQ(qs.size(), 2u);
  EXPECT_TRUE(qs[0].suspended && qs[1].suspended);
  auto r = f.ctx->resume(kPid, std::nullopt);
  EXPECT_EQ(r.result.count, 2);
  EXPECT_FALSE(f.kfd->suspended(kPid, late));
  auto stats = f.ctx->stats();
  EXPECT_EQ(stats.suspend_calls, 1u);
  EXPECT_EQ(stats.resume_calls, 1u);
  EXPECT_GE(stats.hop.calls, 4u);
}

// Between events the snapshot is exact (creation and destruction are both announced), so a
// suspend or resume of all queues is one ioctl, and a destroyed queue is not asked for.
TEST(CoreContext, SuspendAndResumeAllCostOneIoctlAndFollowCreationAndDestruction) {
  Fixture f;
  f.kfd->create_queue(kPid);
  const uint32_t doomed = f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.kfd->ops.clear();
  auto o = f.ctx->suspend(kPid, std::nullopt, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(o.result.count, 2);
  ASSERT_EQ(f.kfd->ops.size(), 1u);
  EXPECT_EQ(f.kfd->ops[0], KFD_IOC_DBG_TRAP_SUSPEND_QUEUES);
  f.kfd->ops.clear();
  auto r = f.ctx->resume(kPid, std::nullopt);
  EXPECT_EQ(r.result.count, 2);
  ASSERT_EQ(f.kfd->ops.size(), 1u);
  EXPECT_EQ(f.kfd->ops[0], KFD_IOC_DBG_TRAP_RESUME_QUEUES);

  f.kfd->destroy_queue(kPid, doomed);
  o = f.ctx->suspend(kPid, std::nullopt, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(o.result.count, 1);
  ASSERT_EQ(o.result.queues.size(), 1u) << "the destroyed queue was asked for";
  EXPECT_TRUE(o.result.all_done());
  r = f.ctx->resume(kPid, std::nullopt);
  EXPECT_EQ(r.result.count, 1);
  EXPECT_TRUE(r.result.all_done());
}

// ROCr's shutdown destroys every queue, then disables the runtime; the control thread may drain
// both events at once. The snapshot must still drop the queues: a suspend-all then asks for
// nothing (not for dead ids, which the kernel answers with EPERM while the runtime is off).
TEST(CoreContext, SuspendAllAfterTheRuntimeShutDownAsksForNoDeadQueue) {
  Fixture f;
  const uint32_t a = f.kfd->create_queue(kPid), b = f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->destroy_queue(kPid, a);
    f.kfd->destroy_queue(kPid, b);
    f.kfd->set_runtime(kPid, DEBUG_RUNTIME_STATE_DISABLED);
  }
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(f.kfd->mu);
    return f.kfd->proc(kPid).runtime_acks == 1;
  }));
  auto o = f.ctx->suspend(kPid, std::nullopt, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_TRUE(o.result.queues.empty());
  auto r = f.ctx->resume(kPid, std::nullopt);
  EXPECT_TRUE(r.result.queues.empty());
  EXPECT_EQ(f.ctx->stats().forced_disables, 0u);
  // The runtime comes back (hsa_init again) and creates a queue: it is suspended, nothing else.
  f.kfd->set_runtime(kPid, DEBUG_RUNTIME_STATE_ENABLED);
  const uint32_t c = f.kfd->create_queue(kPid);
  o = f.ctx->suspend(kPid, std::nullopt, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_TRUE(o.result.all_done());
  ASSERT_EQ(o.result.queues.size(), 1u);
  EXPECT_TRUE(f.kfd->suspended(kPid, c));
}

// The event drain clears EC_QUEUE_NEW in the kernel before the snapshot is refreshed; if that
// refresh fails once, the next suspend must refresh again rather than trust the old snapshot.
TEST(CoreContext, AFailedSnapshotRefreshIsRetriedBeforeTheNextSuspend) {
  Fixture f;
  const uint32_t a = f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT] = -ENOMEM;
    f.kfd->ops.clear();
  }
  const uint32_t b = f.kfd->create_queue(kPid);
  // The control thread drains the event and fails to refresh.
  ASSERT_TRUE(eventually([&] { return f.kfd->count_ops(KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT) >= 1; }));
  EXPECT_TRUE(eventually([&] { return !f.ctx->take_notices().empty(); })) << "the failure was not reported";
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op.clear();
  }
  auto o = f.ctx->suspend(kPid, std::nullopt, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(o.result.count, 2);
  EXPECT_TRUE(f.kfd->suspended(kPid, a));
  EXPECT_TRUE(f.kfd->suspended(kPid, b)) << "the new queue would keep running through the online request";
}

// The kernel raises EC_QUEUE_NEW only after CREATE_QUEUE dropped the process lock, so a caller can
// know a queue id (sysfs) before the event: naming it still suspends it.
TEST(CoreContext, ExplicitIdOfAQueueNotYetAnnouncedIsSnapshottedFirst) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  const uint32_t quiet = f.kfd->create_queue(kPid, /*announce=*/false);
  const std::vector<uint32_t> ids{quiet};
  auto o = f.ctx->suspend(kPid, ids, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_TRUE(o.result.all_done());
  EXPECT_TRUE(f.kfd->suspended(kPid, quiet));
  f.ctx->resume(kPid, ids);
  EXPECT_FALSE(f.kfd->suspended(kPid, quiet));
}

TEST(CoreContext, DetachResumesThenDisablesThenDetachesPtrace) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  std::vector<uint32_t> ids{0};
  f.ctx->suspend(kPid, ids, 0);
  f.kfd->ops.clear();
  f.ctx->detach(kPid);
  // RESUME, then the event query that answers a pending runtime event, then DISABLE.
  ASSERT_EQ(f.kfd->ops.size(), 3u);
  EXPECT_EQ(f.kfd->ops[0], KFD_IOC_DBG_TRAP_RESUME_QUEUES);
  EXPECT_EQ(f.kfd->ops[1], KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
  EXPECT_EQ(f.kfd->ops[2], KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(f.tracer->log.back(), "detach 5151");
  EXPECT_FALSE(f.kfd->suspended(kPid, 0));
  EXPECT_FALSE(f.ctx->attached(kPid));
}

TEST(CoreContext, DestructionResumesAndDetachesEveryTarget) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.kfd->create_queue(kPid + 1);
  f.ctx->attach(kPid);
  f.ctx->attach(kPid + 1);
  f.ctx->suspend(kPid, std::nullopt, 0);
  f.ctx->suspend(kPid + 1, std::nullopt, 0);
  ASSERT_TRUE(f.kfd->suspended(kPid, 0));
  f.ctx.reset();
  EXPECT_FALSE(f.kfd->suspended(kPid, 0));
  EXPECT_FALSE(f.kfd->suspended(kPid + 1, 0));
  EXPECT_FALSE(f.kfd->proc(kPid).debug_enabled);
  EXPECT_FALSE(f.kfd->proc(kPid + 1).debug_enabled);
  EXPECT_EQ(f.tracer->log.size(), 4u);  // two seizes, two detaches
}

TEST(CoreContext, ResumeFailureFallsBackToDisable) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  f.kfd->fail_op[KFD_IOC_DBG_TRAP_RESUME_QUEUES] = -EIO;
  try {
    f.ctx->resume(kPid, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    EXPECT_NE(std::string(e.what()).find("disabled"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(f.kfd->suspended(kPid, 0));  // DISABLE resumed it
  EXPECT_TRUE(f.kfd->proc(kPid).debug_enabled);  // and the session was re-enabled
  EXPECT_EQ(f.ctx->stats().forced_disables, 1u);
}

TEST(CoreContext, FailedForcedDisableKeepsTheLedgerForTheWatchdog) {
  Fixture f(std::chrono::milliseconds(1000));
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_RESUME_QUEUES] = -EIO;
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_DISABLE] = -EPERM;
  }
  try {
    f.ctx->resume(kPid, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    EXPECT_NE(std::string(e.what()).find("may stay suspended"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("resumed every queue"), std::string::npos) << e.what();
  }
  ASSERT_TRUE(f.kfd->suspended(kPid, 0));
  auto qs = f.ctx->queues(kPid);
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_TRUE(qs[0].suspended);  // still tracked
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op.clear();
  }
  f.now_ms = 1001;  // one bound after the failed attempt
  EXPECT_TRUE(eventually([&] { return !f.kfd->suspended(kPid, 0); }));
}

TEST(CoreContext, DetachReportsQueuesLeftSuspended) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_RESUME_QUEUES] = -EIO;
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_DISABLE] = -EPERM;
  }
  try {
    f.ctx->detach(kPid);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    EXPECT_NE(std::string(e.what()).find("[0]"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(f.ctx->attached(kPid));  // detached anyway
  std::lock_guard lock(f.kfd->mu);
  f.kfd->fail_op.clear();  // let the fixture's teardown proceed normally
}

TEST(CoreContext, InconsistentCountIsNotHidden) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.kfd->count_skew = 1;
  try {
    f.ctx->suspend(kPid, std::nullopt, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPROTO);
  }
  EXPECT_FALSE(f.kfd->suspended(kPid, 0));
}

TEST(CoreContext, WatchdogResumesOldSuspensions) {
  Fixture f(std::chrono::milliseconds(1000));
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  ASSERT_TRUE(f.kfd->suspended(kPid, 0));
  // Not before the bound, and not at it ("longer than"): a tick has run at each of these times.
  for (int64_t t : {1, 500, 999, 1000}) {
    f.now_ms = t;
    wait_whole_tick(f);
    ASSERT_TRUE(f.kfd->suspended(kPid, 0)) << "the watchdog fired at " << t << " ms of 1000";
  }
  EXPECT_EQ(f.ctx->stats().watchdog_resumes, 0u);
  f.now_ms = 1001;
  EXPECT_TRUE(eventually([&] { return !f.kfd->suspended(kPid, 0); }));
  EXPECT_EQ(f.ctx->stats().watchdog_resumes, 1u);
  auto notices = f.ctx->take_notices();
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices[0].message.find("watchdog"), std::string::npos) << notices[0].message;
}

// gpreemptd's reload: a new bound applies from the next tick, to suspensions already held.
TEST(CoreContext, TheWatchdogBoundFollowsASetBound) {
  Fixture f(std::chrono::milliseconds(1000));
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  f.ctx->set_watchdog_bound(std::chrono::milliseconds(200));
  EXPECT_EQ(f.ctx->watchdog_bound(), std::chrono::milliseconds(200));
  f.now_ms = 200;
  wait_whole_tick(f);
  ASSERT_TRUE(f.kfd->suspended(kPid, 0)) << "the watchdog fired at the bound, not after it";
  f.now_ms = 201;
  EXPECT_TRUE(eventually([&] { return !f.kfd->suspended(kPid, 0); }))
      << "a suspension held past the new bound (the old one was 1000 ms)";
  auto notices = f.ctx->take_notices();
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices[0].message.find("longer than 200 ms"), std::string::npos) << notices[0].message;
}

TEST(CoreContext, FailedDisableRestampsTheLedger) {
  // After a failed resume and a failed DISABLE the watchdog retries one bound after the failure,
  // not one bound after the original suspend (that would retry on every tick).
  Fixture f(std::chrono::milliseconds(1000));
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  f.now_ms = 600;
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_RESUME_QUEUES] = -EIO;
    f.kfd->fail_op[KFD_IOC_DBG_TRAP_DISABLE] = -EPERM;
  }
  EXPECT_THROW(f.ctx->resume(kPid, std::nullopt), Error);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->fail_op.clear();
  }
  f.now_ms = 1001;  // a bound after the suspend, 401 ms after the failure
  wait_whole_tick(f);
  EXPECT_TRUE(f.kfd->suspended(kPid, 0));
  EXPECT_EQ(f.ctx->stats().watchdog_resumes, 0u);
  f.now_ms = 1600;  // exactly one bound after the failure
  wait_whole_tick(f);
  EXPECT_TRUE(f.kfd->suspended(kPid, 0));
  f.now_ms = 1601;
  EXPECT_TRUE(eventually([&] { return !f.kfd->suspended(kPid, 0); }));
  EXPECT_EQ(f.ctx->stats().watchdog_resumes, 1u);
}

TEST(CoreContext, SuspendSendsTheRequestedGraceToTheKernel) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 210);
  std::lock_guard lock(f.kfd->mu);
  std::vector<uint32_t> graces;
  for (const auto& a : f.kfd->args_in)
    if (a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES) graces.push_back(a.suspend_queues.grace_period);
  EXPECT_EQ(graces, std::vector<uint32_t>{210});
}

TEST(CoreContext, WatchdogResumesQueuesWhoseSuspendReportedSchedulerError) {
  Fixture f(std::chrono::milliseconds(1000));
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.kfd->error_bit_next_suspend = true;
  auto o = f.ctx->suspend(kPid, std::nullopt, 0);
  ASSERT_EQ(o.result.errors, 1u);
  ASSERT_TRUE(f.kfd->suspended(kPid, 0));  // marked suspended before the failed rebuild
  auto qs = f.ctx->queues(kPid);
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_TRUE(qs[0].suspended);
  f.now_ms = 1001;
  EXPECT_TRUE(eventually([&] { return !f.kfd->suspended(kPid, 0); }));
}

TEST(CoreContext, TargetExitIsNoticedAndForgotten) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->proc(kPid).gone = true;
  }
  {
    std::lock_guard lock(f.tracer->mu);
    f.tracer->gone.insert(kPid);
  }
  EXPECT_TRUE(eventually([&] { return !f.ctx->attached(kPid); }));
  auto notices = f.ctx->take_notices();
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices[0].message.find("exited while 1"), std::string::npos) << notices[0].message;
  try {
    f.ctx->suspend(kPid, std::nullopt, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ENOENT);
  }
}

TEST(CoreContext, TargetGoneFromKfdIsDetachedFromPtrace) {
  // ESRCH from the KFD while the tracer has not seen an exit (exit in progress, or exec): the
  // tracee must not stay seized once forgotten.
  Fixture f(std::chrono::milliseconds(1000));
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  f.ctx->suspend(kPid, std::nullopt, 0);
  {
    std::lock_guard lock(f.kfd->mu);
    f.kfd->proc(kPid).gone = true;
  }
  f.now_ms = 1001;  // the watchdog's resume meets ESRCH
  EXPECT_TRUE(eventually([&] { return !f.ctx->attached(kPid); }));
  std::lock_guard lock(f.tracer->mu);
  EXPECT_EQ(f.tracer->log.back(), "detach 5151");
}

TEST(CoreContext, TimedOutDetachIsFinishedByTheControlLoop) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  {
    std::lock_guard lock(f.tracer->mu);
    f.tracer->wont_stop.insert(kPid);
  }
  f.ctx->detach(kPid);
  EXPECT_FALSE(f.ctx->attached(kPid));
  try {
    f.ctx->attach(kPid);  // still seized by us: a new seize would fail
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EBUSY);
  }
  {
    std::lock_guard lock(f.tracer->mu);
    EXPECT_EQ(f.tracer->log.back(), "detach pending 5151");
    f.tracer->wont_stop.erase(kPid);  // the target finally stops
  }
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(f.tracer->mu);
    return f.tracer->log.back() == "detach 5151";
  }));
  f.ctx->attach(kPid);
  EXPECT_TRUE(f.ctx->attached(kPid));
}

TEST(CoreContext, RuntimeStartupIsAnsweredWithoutAnyCall) {
  Fixture f;
  f.kfd->proc(kPid).runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
  f.ctx->attach(kPid);
  f.kfd->set_runtime(kPid, DEBUG_RUNTIME_STATE_ENABLED);
  // The control thread watches the event pipe and answers on its own.
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(f.kfd->mu);
    return f.kfd->proc(kPid).runtime_acks == 1;
  }));
}

TEST(CoreContext, CallsFromManyThreadsAreSerialized) {
  Fixture f;
  for (int i = 0; i < 4; ++i) f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint32_t> ids{static_cast<uint32_t>(t)};
      for (int i = 0; i < 50; ++i) {
        try {
          f.ctx->suspend(kPid, ids, 0);
          f.ctx->resume(kPid, ids);
        } catch (...) {
          ++failures;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(f.ctx->stats().suspend_calls, 200u);
}

TEST(CoreControlThread, ThrowingTickDoesNotEndTheLoop) {
  struct Loop final : preempt::ControlLoop {
    std::atomic<int> ticks{0};
    std::atomic<int> errors{0};
    std::vector<int> watched_fds() override { return {}; }
    void on_readable(int) override {}
    void tick() override {
      if (ticks++ < 3) throw std::runtime_error("tick failed");
    }
    std::chrono::milliseconds tick_interval() override { return std::chrono::milliseconds(1); }
    void on_loop_error(const std::string& what) override {
      if (what == "tick failed") ++errors;
    }
  } loop;
  preempt::ControlThread thread(loop);
  EXPECT_TRUE(eventually([&] { return loop.ticks.load() > 3; }));
  EXPECT_EQ(thread.call([] { return 42; }), 42);
  EXPECT_EQ(loop.errors.load(), 3);
}

namespace {
int open_fd_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d)) ++n;
    ::closedir(d);
  }
  return n;
}
}  // namespace

TEST(CoreContext, FailedControlThreadStartLeaksNoPipe) {
  // Room for the four signal-pipe ends but not for the control thread's eventfd.
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  std::set<int> used;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.' && std::atoi(e->d_name) != ::dirfd(d)) used.insert(std::atoi(e->d_name));
    ::closedir(d);
  }
  int limit = 0;
  for (int free_fds = 0; free_fds < 4; ++limit)
    if (!used.count(limit)) ++free_fds;
  FakeKfd kfd;
  FakeTracer tracer;
  preempt::ContextOptions o;
  o.handle_signals = true;
  // UBSan's vptr check, the first time it meets a (type, vtable) pair, probes the vtable through a
  // pipe of its own (sanitizer_common's IsAccessibleMemoryRange); with no descriptor left it
  // reports a false "invalid vptr". The same construction once with descriptors to spare, and the
  // thrown type once, fill its cache so that the run under the limit needs no probe. Harmless
  // without sanitizers.
  {
    preempt::Context warm(o, std::make_unique<gpreempt::testing::DriverRef>(kfd),
                          std::make_unique<gpreempt::testing::TracerRef>(tracer));
  }
  try {
    throw Error(EMFILE, "warm-up");
  } catch (const Error& e) {
    ASSERT_EQ(e.code(), EMFILE);
  }
  const int before = open_fd_count();
  rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(limit);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  int code = 0;
  try {
    preempt::Context ctx(o, std::make_unique<gpreempt::testing::DriverRef>(kfd),
                         std::make_unique<gpreempt::testing::TracerRef>(tracer));
  } catch (const Error& e) {
    code = e.code();
  }
  ::setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_EQ(code, EMFILE) << "the limit did not make the eventfd fail; the test proves nothing";
  EXPECT_EQ(open_fd_count(), before);
}

namespace {
// Waits for a forked child; kills it if it has not finished after a generous bound (a hang is the
// failure being tested, not a slow machine).
int wait_child(pid_t child) {
  int status = 0;
  for (int i = 0; i < 30000; ++i) {
    pid_t w = ::waitpid(child, &status, WNOHANG);
    if (w == child) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return -1;
}
}  // namespace

TEST(CoreContext, ForkedChildGetsEchildAndCanClose) {
  Fixture f;
  f.kfd->create_queue(kPid);
  f.ctx->attach(kPid);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 1;
    try {
      f.ctx->attached(kPid);
      rc = 2;
    } catch (const Error& e) {
      rc = e.code() == ECHILD ? 0 : 3;
    }
    f.ctx.reset();  // must neither hang nor touch the parent's targets
    ::_exit(rc);
  }
  const int status = wait_child(child);
  ASSERT_NE(status, -1) << "the forked child hung";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: call succeeded, 3: wrong errno";
  EXPECT_TRUE(f.ctx->attached(kPid));  // the parent's context is untouched
  EXPECT_TRUE(f.kfd->proc(kPid).debug_enabled);
}

TEST(CoreSignals, ForkedChildDoesNotWakeTheParentsContexts) {
  struct sigaction cur = {};
  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &cur), 0);
  if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
    GTEST_SKIP() << "SIGHUP is ignored here: no handler gets installed";
  int notify[2], done[2];
  ASSERT_EQ(::pipe2(notify, O_NONBLOCK | O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(done, O_NONBLOCK | O_CLOEXEC), 0);
  const int slot = preempt::register_signal_slot({notify[1], done[0]});
  ASSERT_GE(slot, 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::raise(SIGHUP);
    ::_exit(0);
  }
  const int status = wait_child(child);
  preempt::unregister_signal_slot(slot);
  pollfd p{notify[0], POLLIN, 0};
  const int readable = ::poll(&p, 1, 0);
  for (int fd : {notify[0], notify[1], done[0], done[1]}) ::close(fd);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);  // the default action still ran
  EXPECT_EQ(readable, 0) << "the child's signal reached the parent's control thread";
}

TEST(CoreControlThread, HopStatsCountEveryCallAndKeepTheLargestHop) {
  struct Loop final : preempt::ControlLoop {
    std::vector<int> watched_fds() override { return {}; }
    void on_readable(int) override {}
    void tick() override {}
    std::chrono::milliseconds tick_interval() override { return std::chrono::milliseconds(200); }
    void on_loop_error(const std::string&) override {}
  } loop;
  preempt::ControlThread thread(loop);
  uint64_t largest_last = 0;
  for (int i = 0; i < 20; ++i) {
    thread.call([] {});
    largest_last = std::max(largest_last, thread.hop_stats().last_hop_ns);
  }
  const preempt::HopStats s = thread.hop_stats();
  EXPECT_EQ(s.calls, 20u);
  // Every hop crosses threads through a mutex and a wake-up: it is never 0 ns on a real clock.
  ASSERT_GT(largest_last, 0u) << "no hop was measured; the test proves nothing";
  EXPECT_EQ(s.max_hop_ns, largest_last);
  EXPECT_GE(s.total_hop_ns, s.max_hop_ns);
}

// A posted call is what its caller (gpreemptd's hint path) is waiting for: the thread runs it as
// soon as it wakes, before the tracee service and watchdog of that turn (tick), which are only
// due every tick interval anyway.
TEST(CoreControlThread, APostedCallRunsBeforeTheTickOfTheTurnItWokeAndOnANamedThread) {
  struct Loop final : preempt::ControlLoop {
    std::atomic<int> ticks{0};
    std::vector<int> watched_fds() override { return {}; }
    void on_readable(int) override {}
    void tick() override { ++ticks; }
    // Never due by time: every tick below follows a wake-up.
    std::chrono::milliseconds tick_interval() override { return std::chrono::hours(1); }
    void on_loop_error(const std::string&) override {}
  } loop;
  preempt::ControlThread thread(loop);
  for (int i = 0; i < 20; ++i) {
    const int at_post = loop.ticks.load();
    std::atomic<int> seen{-1};
    std::string name;
    thread.post([&] {
      char buf[16] = {};
      pthread_getname_np(pthread_self(), buf, sizeof buf);
      name = buf;
      seen = loop.ticks.load();
    });
    ASSERT_TRUE(eventually([&] { return seen.load() >= 0; }));
    EXPECT_EQ(seen.load(), at_post) << "post " << i << " ran after a tick of its own turn";
    EXPECT_EQ(name, "gpreempt-ctl");
    // The turn ends with its tick; then the thread waits in poll() for the next post.
    ASSERT_TRUE(eventually([&] { return loop.ticks.load() > seen.load(); }));
  }
}

TEST(CoreSignals, AStaleAnswerDoesNotEndTheWaitForTheNextSignal) {
  // An answer that arrived after an earlier wait timed out is still in the done pipe. The handler
  // must drain it and wait for the answer to this signal, or the program dies of the signal before
  // its targets are resumed.
  struct sigaction cur = {};
  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &cur), 0);
  if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
    GTEST_SKIP() << "SIGHUP is ignored here: no handler gets installed";
  int answered[2];
  ASSERT_EQ(::pipe2(answered, O_NONBLOCK | O_CLOEXEC), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int notify[2], done[2];
    if (::pipe2(notify, O_CLOEXEC) != 0 || ::pipe2(done, O_NONBLOCK | O_CLOEXEC) != 0) ::_exit(3);
    if (preempt::register_signal_slot({notify[1], done[0]}) < 0) ::_exit(4);
    const char stale = 1;
    if (::write(done[1], &stale, 1) != 1) ::_exit(5);
    // The control thread's part: answer late (well inside kSignalResumeTimeoutMs), saying so to
    // the parent first. A handler that took the stale byte for the answer is dead by then.
    std::thread answerer([&] {
      char c;
      if (::read(notify[0], &c, 1) != 1) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      (void)!::write(answered[1], "A", 1);
      (void)!::write(done[1], &c, 1);
    });
    answerer.detach();
    ::raise(SIGHUP);  // dies of it (default action) once the handler returns
    ::_exit(0);
  }
  ::close(answered[1]);
  const int status = wait_child(child);
  char c = 0;
  const ssize_t n = ::read(answered[0], &c, 1);
  ::close(answered[0]);
  ASSERT_NE(status, -1) << "the forked child hung";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP)
      << "the child did not die of the signal (exit code " << WEXITSTATUS(status) << ")";
  EXPECT_EQ(n, 1) << "the handler returned before the answer to this signal: it took the stale "
                     "byte for the answer";
}
