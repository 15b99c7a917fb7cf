// DebugSession over the fake KFD: snapshot sizing, EC_QUEUE_NEW, bits 30/31, the count
// cross-check, EINTR, runtime events, and errno → message mapping.
#include <gtest/gtest.h>

#include "common/trace.h"
#include "fake_kfd.h"
#include "kfd/dbg_trap.h"
#include "kfd/session.h"
#include "kfd/version.h"

using namespace gpreempt;
using namespace gpreempt::kfd;
using gpreempt::testing::FakeKfd;

namespace {
constexpr uint32_t kSessionPid = 4242;

std::vector<uint32_t> ids_of(const std::vector<QueueInfo>& qs) {
  std::vector<uint32_t> out;
  for (const auto& q : qs) out.push_back(q.queue_id);
  return out;
}
}  // namespace

TEST(CoreSession, EnableReportsRuntimeStateAndRejectsSecondDebugger) {
  FakeKfd kfd;
  kfd.proc(kSessionPid).runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
  DebugSession s(kfd, kSessionPid);
  s.enable();
  EXPECT_TRUE(s.enabled());
  EXPECT_EQ(s.runtime_state(), DEBUG_RUNTIME_STATE_ENABLED);
  EXPECT_EQ(kfd.proc(kSessionPid).enable_mask, kSessionExceptionMask);
  DebugSession other(kfd, kSessionPid);
  try {
    other.enable();
    FAIL() << "second ENABLE succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EALREADY);
    EXPECT_NE(std::string(e.what()).find("another debugger"), std::string::npos) << e.what();
  }
}

TEST(CoreSession, SnapshotGrowsBufferAndClearsNewBit) {
  FakeKfd kfd;
  for (int i = 0; i < 40; ++i) kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  const auto& snap = s.refresh_snapshot();
  ASSERT_EQ(snap.size(), 40u);
  // First call with the initial capacity (16), the second with room for all.
  ASSERT_EQ(kfd.snapshot_caps.size(), 2u);
  EXPECT_EQ(kfd.snapshot_caps[0], 16u);
  EXPECT_GE(kfd.snapshot_caps[1], 40u);
  // Newest first, as the kernel lists them; status as seen before clearing. The first (too small)
  // call already wrote — and cleared — the 16 newest; the oldest were seen new by the second call.
  EXPECT_EQ(snap.front().queue_id, 39u);
  EXPECT_FALSE(snap.front().exception_status & KFD_EC_MASK(EC_QUEUE_NEW));
  EXPECT_EQ(snap.back().queue_id, 0u);
  EXPECT_TRUE(snap.back().exception_status & KFD_EC_MASK(EC_QUEUE_NEW));
  for (auto& q : kfd.proc(kSessionPid).queues) EXPECT_FALSE(q.status & KFD_EC_MASK(EC_QUEUE_NEW));
}

TEST(CoreSession, NewQueueIsInvalidUntilSnapshotted) {
  FakeKfd kfd;
  DebugSession s(kfd, kSessionPid);
  s.enable();
  uint32_t a = kfd.create_queue(kSessionPid);
  std::vector<uint32_t> ids{a};
  auto r = s.suspend(ids, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(r.count, 0);
  ASSERT_EQ(r.queues.size(), 1u);
  EXPECT_EQ(r.queues[0].outcome, QueueOutcome::kInvalid);
  EXPECT_TRUE(r.inconsistency.empty());
  s.refresh_snapshot();
  r = s.suspend(ids, KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(r.count, 1);
  EXPECT_TRUE(r.all_done());
  EXPECT_TRUE(kfd.suspended(kSessionPid, a));
  r = s.resume(ids);
  EXPECT_TRUE(r.all_done());
  EXPECT_FALSE(kfd.suspended(kSessionPid, a));
}

TEST(CoreSession, PartialSuspendReportsEachQueue) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  std::vector<uint32_t> ids{0, 7, 1};
  auto r = s.suspend(ids, 100);
  EXPECT_EQ(r.count, 2);
  EXPECT_EQ(r.invalid, 1u);
  EXPECT_EQ(r.queues[1].queue_id, 7u);
  EXPECT_EQ(r.queues[1].outcome, QueueOutcome::kInvalid);
  EXPECT_EQ(r.queues[0].outcome, QueueOutcome::kDone);
  EXPECT_FALSE(r.all_done());
  EXPECT_TRUE(r.inconsistency.empty());
}

TEST(CoreSession, SchedulerFailureSetsErrorOutcome) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  kfd.error_bit_next_suspend = true;
  std::vector<uint32_t> ids{0};
  auto r = s.suspend(ids, 0);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_EQ(r.queues[0].outcome, QueueOutcome::kError);
  EXPECT_TRUE(r.inconsistency.empty());  // count 0 == #done 0
}

TEST(CoreSession, CountThatContradictsBitsIsFlagged) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  kfd.count_skew = 1;
  std::vector<uint32_t> ids{0};
  auto r = s.suspend(ids, 0);
  EXPECT_FALSE(r.inconsistency.empty());
  EXPECT_FALSE(r.all_done());
}

TEST(CoreSession, EintrIsRetriedWithTheOriginalArray) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  kfd.eintr_next = 2;  // each interrupted call leaves bits 31 (and 30 on the first entry) behind
  const std::vector<uint32_t> ids{1, 0};
  auto r = s.suspend(ids, 210, KFD_EC_MASK(EC_QUEUE_NEW));
  EXPECT_TRUE(r.all_done()) << r.inconsistency;
  EXPECT_EQ(r.count, 2);
  ASSERT_EQ(kfd.count_ops(KFD_IOC_DBG_TRAP_SUSPEND_QUEUES), 3u);
  // Every attempt, retries included, saw the caller's array and arguments unchanged.
  ASSERT_EQ(kfd.arrays_in.size(), 3u);
  for (const auto& a : kfd.arrays_in) EXPECT_EQ(a, ids);
  for (const auto& a : kfd.args_in) {
    if (a.op != KFD_IOC_DBG_TRAP_SUSPEND_QUEUES) continue;
    EXPECT_EQ(a.suspend_queues.grace_period, 210u);
    EXPECT_EQ(a.suspend_queues.num_queues, 2u);
    EXPECT_EQ(a.suspend_queues.exception_mask, KFD_EC_MASK(EC_QUEUE_NEW));
  }
}

TEST(CoreSession, EintrOnResumeRestoresTheArray) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  const std::vector<uint32_t> ids{0, 1};
  ASSERT_TRUE(s.suspend(ids, 0).all_done());
  kfd.arrays_in.clear();
  kfd.eintr_next = 1;
  auto r = s.resume(ids);
  EXPECT_TRUE(r.all_done()) << r.inconsistency;
  EXPECT_FALSE(kfd.suspended(kSessionPid, 0));
  ASSERT_EQ(kfd.arrays_in.size(), 2u);
  for (const auto& a : kfd.arrays_in) EXPECT_EQ(a, ids);
}

TEST(CoreSession, EintrOnSnapshotRetriesWithTheSameBuffer) {
  // The kernel sets num_queues to 0 before it writes anything and copies the arguments back even
  // when the call fails: a retry that kept them would ask for a zero-entry snapshot.
  FakeKfd kfd;
  for (int i = 0; i < 3; ++i) kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  kfd.eintr_next = 1;
  const auto& snap = s.refresh_snapshot();
  EXPECT_EQ(snap.size(), 3u);
  EXPECT_EQ(kfd.snapshot_caps, (std::vector<uint32_t>{16, 16}));
}

TEST(CoreSession, SuspendPassesTheGracePeriodUnchanged) {
  // The grace period is in the kernel's unit (1,000 GPU clocks, FACTS §8): whatever the caller
  // asked reaches the ioctl as is, and only an explicit default request sends 0xffffffff.
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  const std::vector<uint32_t> ids{0};
  for (uint32_t grace : {0u, 1u, 210u, KFD_USE_DEFAULT_GRACE_PERIOD - 1, KFD_USE_DEFAULT_GRACE_PERIOD}) {
    kfd.args_in.clear();
    ASSERT_TRUE(s.suspend(ids, grace).all_done());
    ASSERT_EQ(kfd.args_in.size(), 1u);
    EXPECT_EQ(kfd.args_in[0].suspend_queues.grace_period, grace);
    ASSERT_TRUE(s.resume(ids).all_done());
  }
}

TEST(CoreSession, SnapshotSizingAtTheBoundaries) {
  // The first snapshot offers 16 entries; a larger count takes exactly one more call with room
  // for all of them, and the next refresh starts from what it saw.
  constexpr uint32_t kCap = 16;
  for (uint32_t n : {0u, kCap - 1, kCap, kCap + 1, 2 * kCap - 1, 2 * kCap, 2 * kCap + 1}) {
    SCOPED_TRACE("queues: " + std::to_string(n));
    FakeKfd kfd;
    for (uint32_t i = 0; i < n; ++i) kfd.create_queue(kSessionPid);
    DebugSession s(kfd, kSessionPid);
    s.enable();
    const auto snap = s.refresh_snapshot();
    ASSERT_EQ(snap.size(), n);
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(snap[i].queue_id, n - 1 - i);  // newest first
    ASSERT_EQ(kfd.snapshot_caps.size(), n <= kCap ? 1u : 2u);
    EXPECT_EQ(kfd.snapshot_caps[0], kCap);
    if (n > kCap) {
      EXPECT_GE(kfd.snapshot_caps[1], n);
    }
    kfd.snapshot_caps.clear();
    EXPECT_EQ(s.refresh_snapshot().size(), n);
    ASSERT_EQ(kfd.snapshot_caps.size(), 1u);  // the second refresh fits at once
    EXPECT_GE(kfd.snapshot_caps[0], n);
  }
}

TEST(CoreSession, DuplicateAndReservedIdsAreRejectedBeforeTheKernel) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  std::vector<uint32_t> dup{0, 0};
  EXPECT_THROW(s.suspend(dup, 0), Error);
  std::vector<uint32_t> reserved{0x80000001u};
  EXPECT_THROW(s.suspend(reserved, 0), Error);
  EXPECT_EQ(kfd.count_ops(KFD_IOC_DBG_TRAP_SUSPEND_QUEUES), 0u);
}

TEST(CoreSession, RuntimeEventsAreAnsweredAndTracked) {
  FakeKfd kfd;
  kfd.proc(kSessionPid).runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
  DebugSession s(kfd, kSessionPid);
  s.enable();
  EXPECT_EQ(s.runtime_state(), DEBUG_RUNTIME_STATE_DISABLED);
  kfd.set_runtime(kSessionPid, DEBUG_RUNTIME_STATE_ENABLED);
  auto ev = s.process_events();
  EXPECT_TRUE(ev.runtime_enabled);
  EXPECT_EQ(ev.runtime_acks, 1u);
  EXPECT_EQ(kfd.proc(kSessionPid).runtime_acks, 1u);
  EXPECT_EQ(s.runtime_state(), DEBUG_RUNTIME_STATE_ENABLED);
  kfd.create_queue(kSessionPid);
  ev = s.process_events();
  EXPECT_TRUE(ev.new_queues);
  kfd.set_runtime(kSessionPid, DEBUG_RUNTIME_STATE_DISABLED);
  ev = s.process_events();
  EXPECT_TRUE(ev.runtime_disabled);
  EXPECT_EQ(kfd.proc(kSessionPid).runtime_acks, 2u);
  // Nothing pending: one QUERY_DEBUG_EVENT answering EAGAIN.
  ev = s.process_events();
  EXPECT_FALSE(ev.new_queues || ev.runtime_enabled || ev.runtime_disabled);
}

TEST(CoreSession, DeletedQueueEventIsReported) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  kfd.destroy_queue(kSessionPid, 0);
  auto ev = s.process_events();
  EXPECT_TRUE(ev.deleted_queues);
  EXPECT_TRUE(ids_of(s.refresh_snapshot()).empty());
}

TEST(CoreSession, SuspendWithoutRuntimeExplainsEperm) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  kfd.proc(kSessionPid).runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
  DebugSession s(kfd, kSessionPid);
  s.enable();
  std::vector<uint32_t> ids{0};
  try {
    s.suspend(ids, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPERM);
    EXPECT_NE(std::string(e.what()).find("runtime is not enabled"), std::string::npos) << e.what();
  }
}

TEST(CoreSession, ExitedTargetIsEsrch) {
  FakeKfd kfd;
  DebugSession s(kfd, kSessionPid);
  s.enable();
  kfd.proc(kSessionPid).gone = true;
  try {
    s.refresh_snapshot();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ESRCH);
    EXPECT_NE(std::string(e.what()).find("has exited"), std::string::npos) << e.what();
  }
}

TEST(CoreSession, DisableResumesEverything) {
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  DebugSession s(kfd, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  std::vector<uint32_t> ids{0};
  s.suspend(ids, 0);
  EXPECT_TRUE(kfd.suspended(kSessionPid, 0));
  EXPECT_EQ(s.disable(), 0);
  EXPECT_FALSE(kfd.suspended(kSessionPid, 0));
  EXPECT_FALSE(s.enabled());
}

TEST(CoreVersionGate, RefusesOutsideTheDebuggerApiWindow) {
  FakeKfd kfd;
  kfd.version = {1, 12};
  try {
    check_version(kfd);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPROTO);
    EXPECT_NE(std::string(e.what()).find("1.12 found"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(">= 1.13 and < 2.0"), std::string::npos) << e.what();
  }
  kfd.version = {2, 0};
  EXPECT_THROW(check_version(kfd), Error);
  kfd.version = {1, 13};
  EXPECT_EQ(check_version(kfd).minor, 13u);
}

TEST(CoreDecodeBatch, RocdbgapiInvariant) {
  std::vector<uint32_t> req{1, 2, 3};
  std::vector<uint32_t> written{1, 2 | KFD_DBG_QUEUE_INVALID_MASK, 3};
  EXPECT_TRUE(decode_batch(req, written, 2, "SUSPEND_QUEUES").inconsistency.empty());
  EXPECT_FALSE(decode_batch(req, written, 3, "SUSPEND_QUEUES").inconsistency.empty());
  EXPECT_FALSE(decode_batch(req, written, 1, "SUSPEND_QUEUES").inconsistency.empty());
}

TEST(CoreSession, DisableFirstAnswersAPendingRuntimeEvent) {
  // The target starts its runtime just before we disable: it blocks until SEND_RUNTIME_EVENT, and
  // DISABLE alone would never release it.
  FakeKfd kfd;
  kfd.proc(kSessionPid).runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
  DebugSession s(kfd, kSessionPid);
  s.enable();
  kfd.set_runtime(kSessionPid, DEBUG_RUNTIME_STATE_ENABLED);
  kfd.ops.clear();
  EXPECT_EQ(s.disable(), 0);
  EXPECT_EQ(kfd.proc(kSessionPid).runtime_acks, 1u);
  ASSERT_FALSE(kfd.ops.empty());
  EXPECT_EQ(kfd.ops.back(), KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(kfd.count_ops(KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT), 1u);
}

TEST(CoreDecodeBatch, ErrorBitWinsOverInvalidBit) {
  // A MES removal failure ORs bit 30 into an entry that still carries the initial bit 31: the
  // queue is in an unknown (possibly suspended) state, not absent.
  std::vector<uint32_t> req{1, 2};
  std::vector<uint32_t> written{1, 2 | KFD_DBG_QUEUE_INVALID_MASK | KFD_DBG_QUEUE_ERROR_MASK};
  auto r = decode_batch(req, written, 1, "SUSPEND_QUEUES");
  EXPECT_EQ(r.queues[1].outcome, QueueOutcome::kError);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_EQ(r.invalid, 0u);
  EXPECT_TRUE(r.inconsistency.empty());
}

TEST(CoreSession, SuspendClearsNoExceptionBitsByDefault) {
  // Observe the clear mask the session passes to SUSPEND_QUEUES.
  struct Spy final : KfdDriver {
    KfdDriver& inner;
    uint64_t mask = ~0ull;
    explicit Spy(KfdDriver& i) : inner(i) {}
    long get_version(Version& v) override { return inner.get_version(v); }
    long dbg_trap(kfd_ioctl_dbg_trap_args& a) override {
      if (a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES) mask = a.suspend_queues.exception_mask;
      return inner.dbg_trap(a);
    }
    std::string describe() const override { return "spy"; }
  };
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  Spy spy(kfd);
  DebugSession s(spy, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  std::vector<uint32_t> ids{0};
  EXPECT_TRUE(s.suspend(ids, 0).all_done());
  EXPECT_EQ(spy.mask, 0u);
}

TEST(CoreTrace, SuspendAndResumeRecordTheQueueArrayWithItsStatusBits) {
  // What explains a partial suspend is the per-queue bits the kernel wrote back: the trace shows
  // the array as it went in and as it came back.
  FakeKfd kfd;
  kfd.create_queue(kSessionPid);
  kfd.create_queue(kSessionPid);
  std::vector<TraceRecord> records;
  set_trace_sink([&](const TraceRecord& r) { records.push_back(r); });
  struct Unset {
    ~Unset() { set_trace_sink(nullptr); }
  } unset;
  auto traced = make_tracing_driver(std::make_unique<gpreempt::testing::DriverRef>(kfd));
  DebugSession s(*traced, kSessionPid);
  s.enable();
  s.refresh_snapshot();
  const std::vector<uint32_t> partial{0, 7};
  s.suspend(partial, 210);
  kfd.error_bit_next_suspend = true;
  const std::vector<uint32_t> failing{1};
  s.suspend(failing, 210);
  const std::vector<uint32_t> both{0, 1};
  s.resume(both);
  std::vector<const TraceRecord*> batch;
  for (const auto& r : records)
    if (r.call == "DBG_TRAP SUSPEND_QUEUES" || r.call == "DBG_TRAP RESUME_QUEUES") batch.push_back(&r);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_NE(batch[0]->in.find("grace=0xd2 ids=[0,7]"), std::string::npos) << batch[0]->in;
  EXPECT_NE(batch[0]->out.find("ids=[0,7|invalid]"), std::string::npos) << batch[0]->out;
  EXPECT_EQ(batch[0]->result, 1);
  EXPECT_NE(batch[1]->in.find("ids=[1]"), std::string::npos) << batch[1]->in;
  EXPECT_NE(batch[1]->out.find("ids=[1|error]"), std::string::npos) << batch[1]->out;
  EXPECT_NE(batch[2]->in.find("num_queues=2 ids=[0,1]"), std::string::npos) << batch[2]->in;
  EXPECT_NE(batch[2]->out.find("ids=[0,1]"), std::string::npos) << batch[2]->out;
}

TEST(CoreDecodeBatch, OutcomesHaveOneTextEach) {
  const std::vector<uint32_t> requested{1, 7, 9};
  const std::vector<uint32_t> written{1, 7 | KFD_DBG_QUEUE_INVALID_MASK,
                                      9 | KFD_DBG_QUEUE_ERROR_MASK | KFD_DBG_QUEUE_INVALID_MASK};
  auto r = decode_batch(requested, written, 1, "SUSPEND_QUEUES");
  EXPECT_EQ(outcome_name(r.queues[0].outcome), std::string("ok"));
  EXPECT_EQ(outcome_name(r.queues[1].outcome), std::string("invalid"));
  EXPECT_EQ(outcome_name(r.queues[2].outcome), std::string("error"));
  EXPECT_EQ(outcome_summary(r),
            " invalid (no such queue, still new, or being destroyed): [7]; error (the scheduler "
            "failed to preempt or remap: timeout or GPU reset): [9];");
}
