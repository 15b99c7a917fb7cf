// sim/device DBG_TRAP against FACTS §7 (prologue order), §8 (operations), §9 (lifetime) and
// §10 (event file). Each test names the FACTS rule it checks.
#include <cerrno>

#include "device_rig.h"

namespace gpreempt::sim::testing {
namespace {

constexpr int kTarget = 200;
constexpr int kDebugger = 300;
constexpr int kDebuggerThread = 301;

// Target with runtime enabled and `n` queues, debugger attached, queues snapshotted (NEW cleared).
std::vector<uint32_t> debugged_target(Rig& r, int n) {
  r.spawn(kTarget);
  r.spawn(kDebugger, {kDebuggerThread});
  EXPECT_EQ(r.runtime_enable(kTarget), 0);
  std::vector<uint32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(r.new_queue(kTarget));
  r.attach(kDebugger, kTarget);
  r.snapshot(kDebugger, kTarget);
  return ids;
}

// A debugged target of two queues whose first is suspended and blocked in its own DESTROY_QUEUE
// (wait_on_destroy_queue); returns the queue ids, r.last_token is the destroy's.
std::vector<uint32_t> destroy_waiting_for_suspended_queue(Rig& r) {
  auto q = debugged_target(r, 2);
  std::vector<uint32_t> ids{q[0]};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  kfd_ioctl_destroy_queue_args d{q[0], 0};
  EXPECT_TRUE(r.raw({kTarget, kTarget}, AMDKFD_IOC_DESTROY_QUEUE, d).blocked);
  return q;
}

// ---- §7 prologue
// ---------------------------------------------------------------------------------

TEST(SimDeviceDbgTrapPrologue, Facts7_2_NoHwsSchedPolicyIsEinval) {
  DeviceOptions o;
  o.sched_policy = 2;
  Rig r(o);
  r.spawn(kTarget);
  auto a = Rig::op(kTarget, 99);  // even before the op and pid are looked at
  EXPECT_EQ(r.dbg({kTarget, kTarget}, a), -EINVAL);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_3_UnknownPidIsEsrch) {
  Rig r;
  r.spawn(kDebugger);
  auto a = Rig::op(4242, KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ESRCH);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_4_TargetWithoutKfdProcessIsEsrch) {
  Rig r;
  r.spawn(kDebugger);
  r.host.add_process(kTarget);  // alive but never opened /dev/kfd
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SUSPEND_QUEUES);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ESRCH);
  a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);  // ENABLE without being the tracer: no creation
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ESRCH);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_4_EnableByTracerCreatesTargetProcess) {
  Rig r;
  r.spawn(kDebugger);
  r.host.add_process(kTarget);
  r.host.tracers[kTarget] = kDebugger;
  r.host.open_file(kDebugger, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  // The target now has a kfd_process: its own queues land in it.
  EXPECT_EQ(r.dev->open({kTarget, kTarget}), 0);
  EXPECT_EQ(r.new_queue(kTarget), 0u);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_3_AnyThreadIdNamesTheProcess) {
  Rig r;
  r.spawn(kTarget, {kTarget + 1});
  r.spawn(kDebugger);
  r.host.tracers[kTarget] = kDebugger;
  r.host.open_file(kDebugger, 7);
  auto a = Rig::op(kTarget + 1, KFD_IOC_DBG_TRAP_ENABLE);  // a non-leader tid of the target
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_6_NotTracerIsEperm) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.host.open_file(kDebugger, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EPERM);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_6_OtherThreadOfTracerProcessIsEperm) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger, {kDebuggerThread});
  r.host.tracers[kTarget] = kDebuggerThread;  // the attach was done by the other thread
  r.host.open_file(kDebugger, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EPERM);
  EXPECT_EQ(r.dbg({kDebugger, kDebuggerThread}, a), 0);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_6_TracingANonLeaderThreadIsNotEnough) {
  Rig r;
  r.spawn(kTarget, {kTarget + 1});
  r.spawn(kDebugger);
  r.host.tracers[kTarget + 1] = kDebugger;  // the leader is what is checked
  r.host.open_file(kDebugger, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EPERM);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_6_SelfDebugNeedsNoPtrace) {
  Rig r;
  r.spawn(kTarget);
  r.host.open_file(kTarget, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kTarget, kTarget}, a), 0);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_6_DisableIsExemptFromPtrace) {
  Rig r;
  debugged_target(r, 1);
  r.spawn(400);  // any process with /dev/kfd open
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(r.dbg({400, 400}, a), 0);
  auto s = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SUSPEND_QUEUES);
  EXPECT_EQ(r.dbg({400, 400}, s), -EPERM);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_7_NotEnabledIsEinval) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.host.tracers[kTarget] = kDebugger;
  for (uint32_t op = KFD_IOC_DBG_TRAP_DISABLE; op <= KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT; ++op) {
    auto a = Rig::op(kTarget, op);
    EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL) << "op " << op;
  }
}

TEST(SimDeviceDbgTrapPrologue, Facts7_8_HwOpsNeedRuntimeEnabledEperm) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.attach(kDebugger, kTarget);  // runtime never enabled
  for (uint32_t op = KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE; op <= KFD_IOC_DBG_TRAP_SET_FLAGS;
       ++op) {
    auto a = Rig::op(kTarget, op);
    a.set_node_address_watch.gpu_id = 0xdead;  // EPERM comes before the watch gpu check
    EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EPERM) << "op " << op;
  }
  auto q = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, q), -EAGAIN) << "non-HW ops work";
}

TEST(SimDeviceDbgTrapPrologue, Facts7_9_AddressWatchUnknownGpuIsEnodev) {
  Rig r;
  debugged_target(r, 0);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH);
  a.set_node_address_watch.gpu_id = 0xdead;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ENODEV);
  a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH);
  a.clear_node_address_watch.gpu_id = 0xdead;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ENODEV);
}

TEST(SimDeviceDbgTrapPrologue, Facts7_10_OpOutOfRangeIsEinval) {
  Rig r;
  debugged_target(r, 0);
  auto a = Rig::op(kTarget, 15);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL);
}

// ---- §8 ENABLE / DISABLE
// ----------------------------------------------------------------------------

TEST(SimDeviceDbgTrapEnable, Facts8_AlreadyEnabledIsEalready) {
  Rig r;
  debugged_target(r, 0);
  r.host.open_file(kDebugger, 8);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 8;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EALREADY);
}

TEST(SimDeviceDbgTrapEnable, Facts8_BadDbgFdIsEbadf_LookedUpInCallersTable) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.host.tracers[kTarget] = kDebugger;
  r.host.open_file(kTarget, 9);  // the target's fd 9 is not the debugger's
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 9;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EBADF);
}

TEST(SimDeviceDbgTrapEnable, Facts8_RuntimeInfoCopiedMinSize16AndSizeWrittenBack) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  r.host.tracers[kTarget] = kDebugger;
  r.host.open_file(kDebugger, 7);
  uint64_t buf = r.host.alloc(kDebugger, 64);
  r.host.put<uint64_t>(kDebugger, buf + 8, 0xeeeeeeeeeeeeeeeeull);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  a.enable.rinfo_ptr = buf;
  a.enable.rinfo_size = 12;  // smaller than the struct: 12 bytes copied
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.enable.rinfo_size, 16u);
  EXPECT_EQ(r.host.get<uint64_t>(kDebugger, buf), 0x1234u) << "r_debug";
  EXPECT_EQ(r.host.get<uint32_t>(kDebugger, buf + 8), DEBUG_RUNTIME_STATE_ENABLED);
  EXPECT_EQ(r.host.get<uint32_t>(kDebugger, buf + 12), 0xeeeeeeeeu) << "beyond 12 bytes: untouched";
}

TEST(SimDeviceDbgTrapEnable, Facts8_RinfoFaultIsEfaultButSessionStaysEnabled) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.host.tracers[kTarget] = kDebugger;
  r.host.open_file(kDebugger, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  a.enable.rinfo_ptr = 0x1000;  // unmapped
  a.enable.rinfo_size = 16;
  a.enable.exception_mask = KFD_EC_MASK(EC_QUEUE_NEW);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EFAULT);
  EXPECT_EQ(a.enable.rinfo_size, 16u);
  auto again = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  again.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, again), -EALREADY);
  r.new_queue(kTarget);  // exception mask was not set on failure: no event
  EXPECT_EQ(r.host.signals[1], 0);
}

TEST(SimDeviceDbgTrapEnable, Facts8_ClosingOurDbgFdCopyChangesNothing) {
  Rig r;
  debugged_target(r, 0);
  ASSERT_EQ(r.host.live_refs.size(), 1u) << "the kernel holds its own reference to the file";
  r.host.fds.clear();  // the debugger closes its fd
  EXPECT_EQ(r.host.live_refs.size(), 1u);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_TRUE(r.host.live_refs.empty()) << "DISABLE drops the event file";
}

TEST(SimDeviceDbgTrapDisable, Facts8_DisableResumesAllAndClearsStatus) {
  Rig r;
  auto ids = debugged_target(r, 3);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, ids), 3);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  for (uint32_t q : {0u, 1u, 2u}) EXPECT_FALSE(r.suspended(kTarget, q));
  // A new session sees no stale status.
  r.attach(kDebugger, kTarget, ~0ull);
  auto e = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, e), -EAGAIN);
}

// ---- §8 SUSPEND / RESUME
// --------------------------------------------------------------------------

TEST(SimDeviceSuspend, Facts8_NewQueueIsInvalidUntilSnapshotClearsIt) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  uint32_t q = r.new_queue(kTarget);
  r.attach(kDebugger, kTarget);
  std::vector<uint32_t> ids{q};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 0);
  EXPECT_EQ(ids[0], q | KFD_DBG_QUEUE_INVALID_MASK);
  EXPECT_FALSE(r.suspended(kTarget, q));
  r.snapshot(kDebugger, kTarget);
  ids = {q};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  EXPECT_EQ(ids[0], q);
  EXPECT_TRUE(r.suspended(kTarget, q));
}

TEST(SimDeviceSuspend, Facts8_CountsAlreadySuspendedUnknownAndDuplicates) {
  Rig r;
  auto q = debugged_target(r, 3);
  std::vector<uint32_t> ids{q[0]};
  ASSERT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  ids = {q[0], q[1], 77, q[1]};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 2) << "already-suspended counts again";
  EXPECT_EQ(ids[0], q[0]);
  EXPECT_EQ(ids[1], q[1]);
  EXPECT_EQ(ids[2], 77u | KFD_DBG_QUEUE_INVALID_MASK);
  EXPECT_EQ(ids[3], q[1] | KFD_DBG_QUEUE_INVALID_MASK) << "only the first duplicate succeeds";
  // ROCdbgapi's invariant: returned + (#bit31) == num_queues.
  EXPECT_FALSE(r.suspended(kTarget, q[2]));
}

TEST(SimDeviceSuspend, Facts8_OnlyBit31IsIgnoredWhenMatching) {
  // q_array_get_index() masks bit 31 only: an entry still carrying bit 30 (an array a caller did
  // not restore after a failed call) names no queue, while a leftover bit 31 is harmless.
  Rig r;
  auto q = debugged_target(r, 2);
  std::vector<uint32_t> ids{q[0] | KFD_DBG_QUEUE_ERROR_MASK, q[1] | KFD_DBG_QUEUE_INVALID_MASK};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  EXPECT_EQ(ids[0], q[0] | KFD_DBG_QUEUE_ERROR_MASK | KFD_DBG_QUEUE_INVALID_MASK);
  EXPECT_EQ(ids[1], q[1]);
  EXPECT_FALSE(r.suspended(kTarget, q[0]));
  EXPECT_TRUE(r.suspended(kTarget, q[1]));
}

TEST(SimDeviceSuspend, Facts8_OneRunlistPerAffectedGpuWithGrace) {
  Rig r({}, "mi308x", 2);
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  uint32_t a = r.new_queue(kTarget);
  auto args = r.aql_queue(kTarget);
  args.gpu_id = r.profile_.gpus[1].gpu_id;
  ASSERT_EQ(r.create(kTarget, args), 0);
  uint32_t b = args.queue_id;
  r.attach(kDebugger, kTarget);
  r.snapshot(kDebugger, kTarget);
  r.hws->requests.clear();
  std::vector<uint32_t> ids{a};
  auto res = r.suspend_resume(kDebugger, kTarget, ids, true, 0, 5);
  EXPECT_EQ(res.ret, 1);
  ASSERT_EQ(r.hws->requests.size(), 1u) << "only the GPU with a matched queue is remapped";
  EXPECT_EQ(r.hws->requests[0].gpu_id, r.gpu());
  EXPECT_EQ(r.hws->requests[0].grace_period, 5u);
  EXPECT_TRUE(r.hws->requests[0].runnable.empty()) << "the suspended queue left the runlist";
  ids = {a, b};
  r.hws->requests.clear();
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 2);
  EXPECT_EQ(r.hws->requests.size(), 2u);
}

TEST(SimDeviceSuspend, Facts8_SchedulerFailureSetsErrorBitNoneCounted) {
  Rig r;
  auto q = debugged_target(r, 2);
  r.hws->auto_result = -ETIME;
  std::vector<uint32_t> ids{q[0], q[1], 9};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 0);
  EXPECT_EQ(ids[0], q[0] | KFD_DBG_QUEUE_ERROR_MASK);
  EXPECT_EQ(ids[1], q[1] | KFD_DBG_QUEUE_ERROR_MASK);
  EXPECT_EQ(ids[2], 9u | KFD_DBG_QUEUE_INVALID_MASK);
}

TEST(SimDeviceSuspend, Facts8_ErrorBitAlsoOnMatchedNewQueues) {
  Rig r;
  auto q = debugged_target(r, 1);
  uint32_t fresh = r.new_queue(kTarget);  // still NEW
  r.hws->auto_result = -EIO;
  std::vector<uint32_t> ids{q[0], fresh};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 0);
  EXPECT_EQ(ids[1], fresh | KFD_DBG_QUEUE_INVALID_MASK | KFD_DBG_QUEUE_ERROR_MASK);
}

TEST(SimDeviceSuspend, Facts8_ExceptionMaskClearedOnMatchedQueues) {
  Rig r;
  auto q = debugged_target(r, 1);
  uint32_t fresh = r.new_queue(kTarget);
  std::vector<uint32_t> ids{q[0], fresh};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids, KFD_EC_MASK(EC_QUEUE_NEW)), 1);
  // The new queue was skipped (INVALID) but its NEW bit is cleared with the others.
  auto entries = r.snapshot(kDebugger, kTarget, 8, 0);
  for (const auto& e : entries) EXPECT_EQ(e.exception_status, 0u) << "queue " << e.queue_id;
}

TEST(SimDeviceSuspend, Facts8_BlockedUntilRunlistDone) {
  Rig r;
  auto q = debugged_target(r, 1);
  r.hws->auto_complete = false;
  std::vector<uint32_t> ids{q[0]};
  auto res = r.suspend_resume(kDebugger, kTarget, ids, true);
  ASSERT_TRUE(res.blocked);
  const CallToken t = r.last_token;
  EXPECT_TRUE(r.suspended(kTarget, q[0]));
  // Another DBG_TRAP on the same target waits for the process mutex.
  auto other = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
  ASSERT_TRUE(r.raw({kDebugger, kDebugger}, AMDKFD_IOC_DBG_TRAP, other).blocked);
  const CallToken t2 = r.last_token;
  EXPECT_TRUE(r.completions.empty());
  r.hws->complete_next(0);
  ASSERT_TRUE(r.completions.count(t));
  EXPECT_EQ(r.completions[t].ret, 1);
  ASSERT_TRUE(r.completions.count(t2));
  EXPECT_EQ(r.completions[t2].ret, -EAGAIN);
  r.read_back(ids);
  EXPECT_EQ(ids[0], q[0]);
}

TEST(SimDeviceSuspend, Facts8_BlockedFailureTimeoutMarksError) {
  Rig r;
  auto q = debugged_target(r, 1);
  r.hws->auto_complete = false;
  std::vector<uint32_t> ids{q[0]};
  ASSERT_TRUE(r.suspend_resume(kDebugger, kTarget, ids, true).blocked);
  const CallToken t = r.last_token;
  r.hws->complete_next(-ETIME);
  EXPECT_EQ(r.completions.at(t).ret, 0);
  r.read_back(ids);
  EXPECT_EQ(ids[0], q[0] | KFD_DBG_QUEUE_ERROR_MASK);
}

TEST(SimDeviceSuspend, Facts8_CancelledCallStillChangesStateButIsNotAnswered) {
  Rig r;
  auto q = debugged_target(r, 1);
  r.hws->auto_complete = false;
  std::vector<uint32_t> ids{q[0]};
  ASSERT_TRUE(r.suspend_resume(kDebugger, kTarget, ids, true).blocked);
  r.dev->cancel(r.last_token);
  r.hws->complete_next(0);
  EXPECT_TRUE(r.completions.empty());
  EXPECT_TRUE(r.suspended(kTarget, q[0]));
}

TEST(SimDeviceSuspend, Facts8_ArrayFaultIsEfault) {
  Rig r;
  debugged_target(r, 1);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SUSPEND_QUEUES);
  a.suspend_queues.queue_array_ptr = 0x2000;  // unmapped
  a.suspend_queues.num_queues = 1;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EFAULT);
}

TEST(SimDeviceResume, Facts8_CountsNotSuspendedAndMarksUnknown) {
  Rig r;
  auto q = debugged_target(r, 2);
  std::vector<uint32_t> ids{q[0]};
  ASSERT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  ids = {q[0], q[1], 50};
  EXPECT_EQ(r.resume(kDebugger, kTarget, ids), 2) << "a running queue counts as resumed";
  EXPECT_EQ(ids[0], q[0]);
  EXPECT_EQ(ids[1], q[1]);
  EXPECT_EQ(ids[2], 50u | KFD_DBG_QUEUE_INVALID_MASK);
  EXPECT_FALSE(r.suspended(kTarget, q[0]));
}

TEST(SimDeviceResume, Facts8_SchedulerFailureSetsErrorBit) {
  Rig r;
  auto q = debugged_target(r, 1);
  std::vector<uint32_t> ids{q[0]};
  ASSERT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  r.hws->auto_result = -EIO;
  EXPECT_EQ(r.resume(kDebugger, kTarget, ids), 0);
  EXPECT_EQ(ids[0], q[0] | KFD_DBG_QUEUE_ERROR_MASK);
}

TEST(SimDeviceResume, Facts8_NullArrayResumesEverything) {
  Rig r;
  auto q = debugged_target(r, 2);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, q), 2);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_RESUME_QUEUES);
  a.resume_queues.queue_array_ptr = 0;
  a.resume_queues.num_queues = 0;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 2);
  EXPECT_FALSE(r.suspended(kTarget, 0));
  EXPECT_FALSE(r.suspended(kTarget, 1));
}

// ---- §5 / §9 blocking destroy
// ---------------------------------------------------------------------

TEST(SimDeviceDestroyQueue, Facts5_DestroyOfSuspendedQueueBlocksUntilResume) {
  Rig r;
  auto q = destroy_waiting_for_suspended_queue(r);
  std::vector<uint32_t> ids;
  const CallToken t = r.last_token;
  // Being destroyed: a suspend request now reports it INVALID.
  ids = {q[0]};
  EXPECT_EQ(r.resume(kDebugger, kTarget, ids), 1);
  ASSERT_TRUE(r.completions.count(t));
  EXPECT_EQ(r.completions[t].ret, 0);
  EXPECT_FALSE(r.exists(kTarget, q[0]));
}

TEST(SimDeviceDestroyQueue, ASignalEndsTheWaitForTheSuspendedQueueWithEintr) {
  // wait_on_destroy_queue's wait_event_interruptible: -ERESTARTSYS (EINTR to a handler without
  // SA_RESTART); the queue stays, marked as being destroyed, and a later destroy finishes it.
  Rig r;
  auto q = destroy_waiting_for_suspended_queue(r);
  std::vector<uint32_t> ids;
  const CallToken t = r.last_token;
  EXPECT_TRUE(r.dev->interrupt(t, 0, 0));
  ASSERT_TRUE(r.completions.count(t));
  EXPECT_EQ(r.completions.at(t).ret, -EINTR);
  EXPECT_TRUE(r.exists(kTarget, q[0]));
  ids = {q[0]};
  EXPECT_EQ(r.resume(kDebugger, kTarget, ids), 1);
  EXPECT_EQ(r.completions.size(), 1u) << "the interrupted destroy is not finished by the resume";
  EXPECT_TRUE(r.exists(kTarget, q[0]));
  EXPECT_EQ(r.destroy(kTarget, q[0]), 0);
  EXPECT_FALSE(r.exists(kTarget, q[0]));
}

TEST(SimDeviceDestroyQueue, ASignalWhileWaitingForTheProcessMutexIsKeptForTheQueueWait) {
  // mutex_lock(&p->mutex) is uninterruptible: the destroy goes on, then finds its queue suspended
  // with the signal pending and returns -ERESTARTSYS at once.
  Rig r;
  auto q = debugged_target(r, 2);
  std::vector<uint32_t> ids{q[0]};
  ASSERT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  r.hws->auto_complete = false;
  ids = {q[1]};
  ASSERT_TRUE(r.suspend_resume(kDebugger, kTarget, ids, true).blocked) << "holds the mutex";
  kfd_ioctl_destroy_queue_args d{q[0], 0};
  ASSERT_TRUE(r.raw({kTarget, kTarget}, AMDKFD_IOC_DESTROY_QUEUE, d).blocked);
  const CallToken t = r.last_token;
  EXPECT_FALSE(r.dev->interrupt(t, 0, 0)) << "a mutex wait is not interrupted";
  EXPECT_FALSE(r.completions.count(t));
  while (r.hws->outstanding()) r.hws->complete_next();
  ASSERT_TRUE(r.completions.count(t));
  EXPECT_EQ(r.completions.at(t).ret, -EINTR);
  EXPECT_TRUE(r.exists(kTarget, q[0]));
}

TEST(SimDeviceDestroyQueue, Facts5_BeingDestroyedQueueIsInvalidForSuspend) {
  Rig r;
  auto q = destroy_waiting_for_suspended_queue(r);
  std::vector<uint32_t> ids;
  r.dev->cancel(r.last_token);  // interrupted: -ERESTARTSYS, the mark stays
  ids = {q[0]};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 1) << "already suspended still counts";
  std::vector<uint32_t> again{q[0]};
  EXPECT_EQ(r.resume(kDebugger, kTarget, again), 1);
  again = {q[0]};
  EXPECT_EQ(r.suspend(kDebugger, kTarget, again), 0);
  EXPECT_EQ(again[0], q[0] | KFD_DBG_QUEUE_INVALID_MASK);
}

// ---- §8 events and queries
// ------------------------------------------------------------------------

TEST(SimDeviceEvents, Facts10_SetExceptionsEnabledSignalsPendingStatus) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.new_queue(kTarget);  // NEW pending
  int file = r.attach(kDebugger, kTarget);
  EXPECT_EQ(r.host.signals[file], 0);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED);
  a.set_exceptions_enabled.exception_mask = KFD_EC_MASK(EC_QUEUE_NEW);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(r.host.signals[file], 1);
}

TEST(SimDeviceEvents, Facts8_QueryDebugEventOrderQueuesDevicesProcess) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  uint32_t q0 = r.new_queue(kTarget);
  uint32_t q1 = r.new_queue(kTarget);
  r.attach(kDebugger, kTarget, ~0ull);
  uint32_t doomed = r.new_queue(kTarget);
  ASSERT_EQ(r.destroy(kTarget, doomed), 0);  // device event
  kfd_ioctl_runtime_enable_args re{0, 0, 0};
  ASSERT_TRUE(r.raw({kTarget, kTarget}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked);  // process event
  std::vector<std::pair<uint32_t, uint64_t>> seen;
  for (;;) {
    auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
    a.query_debug_event.exception_mask = ~0ull;
    long ret = r.dbg({kDebugger, kDebugger}, a);
    if (ret == -EAGAIN) break;
    ASSERT_EQ(ret, 0);
    seen.emplace_back(a.query_debug_event.queue_id, a.query_debug_event.exception_mask);
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], std::make_pair(q1, KFD_EC_MASK(EC_QUEUE_NEW))) << "newest queue first";
  EXPECT_EQ(seen[1], std::make_pair(q0, KFD_EC_MASK(EC_QUEUE_NEW)));
  EXPECT_EQ(seen[2].second, KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE));
  EXPECT_EQ(seen[3].second, KFD_EC_MASK(EC_PROCESS_RUNTIME));
}

TEST(SimDeviceEvents, Facts8_QueryExceptionInfoErrors) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  uint32_t q = r.new_queue(kTarget);
  r.attach(kDebugger, kTarget, ~0ull);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO);
  a.query_exception_info.exception_code = EC_QUEUE_NEW;
  a.query_exception_info.source_id = q;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL) << "NULL info_ptr, checked first";
  a.query_exception_info.info_ptr = r.host.alloc(kDebugger, 16);
  a.query_exception_info.source_id = 55;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL) << "unknown queue";
  a.query_exception_info.source_id = q;
  a.query_exception_info.exception_code = EC_QUEUE_WAVE_TRAP;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ENODATA) << "not raised";
  a.query_exception_info.exception_code = 7;  // no such code
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL);
  a.query_exception_info.exception_code = EC_QUEUE_NEW;
  a.query_exception_info.clear_exception = 1;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ENODATA) << "cleared";
  a.query_exception_info.exception_code = EC_DEVICE_QUEUE_DELETE;
  a.query_exception_info.source_id = 0x1;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL) << "unknown gpu";
}

TEST(SimDeviceEvents, Facts8_QueryExceptionInfoRuntimeCopiesInfo) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  r.attach(kDebugger, kTarget, ~0ull);
  kfd_ioctl_runtime_enable_args re{0x5555, 1, 0};
  ASSERT_TRUE(r.raw({kTarget, kTarget}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked);
  uint64_t buf = r.host.alloc(kDebugger, 32);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO);
  a.query_exception_info.exception_code = EC_PROCESS_RUNTIME;
  a.query_exception_info.info_ptr = buf;
  a.query_exception_info.info_size = 32;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.query_exception_info.info_size, 16u);
  EXPECT_EQ(r.host.get<uint64_t>(kDebugger, buf), 0x5555u);
  EXPECT_EQ(r.host.get<uint32_t>(kDebugger, buf + 8), DEBUG_RUNTIME_STATE_ENABLED);
}

TEST(SimDeviceEvents, Facts8_SendRuntimeEventUnknownGpuIsEnodev) {
  Rig r;
  debugged_target(r, 0);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  a.send_runtime_event.exception_mask = KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION);
  a.send_runtime_event.gpu_id = 0xbeef;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ENODEV);
}

// ---- §8 snapshots
// ----------------------------------------------------------------------------------

TEST(SimDeviceSnapshot, Facts8_QueueSnapshotTwoCallSizing) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  for (int i = 0; i < 5; ++i) r.new_queue(kTarget);
  r.attach(kDebugger, kTarget);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT);
  a.queue_snapshot.num_queues = 0;  // count query, NULL buffer is fine
  a.queue_snapshot.entry_size = 64;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.queue_snapshot.num_queues, 5u);
  uint32_t total = 0;
  auto two = r.snapshot(kDebugger, kTarget, 2, KFD_EC_MASK(EC_QUEUE_NEW), &total);
  EXPECT_EQ(total, 5u) << "total count even when the buffer is smaller";
  ASSERT_EQ(two.size(), 2u);
  // Only the written entries were cleared.
  auto all = r.snapshot(kDebugger, kTarget, 8, 0);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].exception_status, 0u);
  EXPECT_EQ(all[1].exception_status, 0u);
  EXPECT_EQ(all[2].exception_status, KFD_EC_MASK(EC_QUEUE_NEW));
  EXPECT_EQ(two[0].exception_status, KFD_EC_MASK(EC_QUEUE_NEW)) << "value before clearing";
}

TEST(SimDeviceSnapshot, Facts8_QueueSnapshotEntrySizeZeroIsEinvalAndStride) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  auto args = r.aql_queue(kTarget);
  ASSERT_EQ(r.create(kTarget, args), 0);
  args = r.aql_queue(kTarget);
  args.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
  ASSERT_EQ(r.create(kTarget, args), 0);
  r.attach(kDebugger, kTarget);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT);
  a.queue_snapshot.num_queues = 7;
  a.queue_snapshot.entry_size = 0;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL);
  EXPECT_EQ(a.queue_snapshot.num_queues, 0u) << "zeroed and copied back";
  // A caller whose entry is 80 bytes: stride 80, 64 written, entry_size out 64.
  uint64_t buf = r.host.alloc(kDebugger, 160);
  for (int i = 0; i < 160; i += 8) r.host.put<uint64_t>(kDebugger, buf + i, ~0ull);
  a.queue_snapshot.snapshot_buf_ptr = buf;
  a.queue_snapshot.num_queues = 2;
  a.queue_snapshot.entry_size = 80;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.queue_snapshot.entry_size, 64u);
  auto e0 = r.host.get<kfd_queue_snapshot_entry>(kDebugger, buf);
  auto e1 = r.host.get<kfd_queue_snapshot_entry>(kDebugger, buf + 80);
  EXPECT_EQ(e0.queue_type, KFD_IOC_QUEUE_TYPE_SDMA);
  EXPECT_EQ(e1.queue_type, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
  EXPECT_EQ(e1.ring_size, 0x100000u);
  EXPECT_EQ(e1.ctx_save_restore_area_size, 0xba6000u);
  EXPECT_EQ(r.host.get<uint64_t>(kDebugger, buf + 64), ~0ull) << "gap between entries untouched";
}

TEST(SimDeviceSnapshot, Facts8_DeviceSnapshotNullBufferIsEinval) {
  Rig r;
  debugged_target(r, 0);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT);
  a.device_snapshot.entry_size = 128;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL);
}

TEST(SimDeviceSnapshot, Facts8_DeviceSnapshotEntriesAndSizes) {
  Rig r({}, "mi308x", 2);
  debugged_target(r, 0);
  uint64_t buf = r.host.alloc(kDebugger, 512);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT);
  a.device_snapshot.snapshot_buf_ptr = buf;
  a.device_snapshot.num_devices = 1;
  a.device_snapshot.entry_size = 200;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.device_snapshot.num_devices, 2u);
  EXPECT_EQ(a.device_snapshot.entry_size, 128u);
  auto e = r.host.get<kfd_dbg_device_info_entry>(kDebugger, buf);
  EXPECT_EQ(e.gpu_id, r.gpu());
  EXPECT_EQ(e.gfx_target_version, 90402u);
  EXPECT_EQ(e.num_xcc, 4u);
  EXPECT_EQ(e.simd_count, 320u);
  EXPECT_EQ(e.device_id, 0x74a2u);
  DeviceOptions o;
  o.minor_version = 16;
  Rig old(o);
  debugged_target(old, 0);
  uint64_t b2 = old.host.alloc(kDebugger, 512);
  auto c = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT);
  c.device_snapshot.snapshot_buf_ptr = b2;
  c.device_snapshot.num_devices = 1;
  c.device_snapshot.entry_size = 128;
  EXPECT_EQ(old.dbg({kDebugger, kDebugger}, c), 0);
  EXPECT_EQ(c.device_snapshot.entry_size, 120u);
}

// ---- §8 hardware ops
// ---------------------------------------------------------------------------------

TEST(SimDeviceHwOps, Facts8_WaveLaunchOverrideAndMode) {
  Rig r;
  debugged_target(r, 0);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE);
  a.launch_override.override_mode = 7;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EINVAL);
  EXPECT_EQ(a.launch_override.support_request_mask, 0xffffffffu) << "before any device narrowed it";
  a.launch_override.override_mode = KFD_DBG_TRAP_OVERRIDE_OR;
  a.launch_override.support_request_mask = KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START;
  a.launch_override.enable_mask = 0x55;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EACCES);
  EXPECT_EQ(a.launch_override.support_request_mask, 0x1ffu) << "supported mask written back";
  EXPECT_EQ(a.launch_override.enable_mask, 0x55u) << "no previous mask on failure";
  a.launch_override.support_request_mask = KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH | 1;
  a.launch_override.enable_mask = KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.launch_override.enable_mask, 0u) << "previous mask";
  a.launch_override.support_request_mask = 1;  // FP_INVALID on, address watch kept
  a.launch_override.enable_mask = 1;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.launch_override.enable_mask, KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH);
  a.launch_override.support_request_mask = 0;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.launch_override.enable_mask, KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH | 1);
  auto m = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE);
  m.launch_mode.launch_mode = 2;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, m), -EINVAL);
  m.launch_mode.launch_mode = KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, m), 0);
}

TEST(SimDeviceHwOps, Facts8_SetFlagsUnsupportedIsEaccesPreviousWrittenBack) {
  Rig r;
  debugged_target(r, 0);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_FLAGS);
  a.set_flags.flags = KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP;  // GFX 9.4.2+ advertises precise memory
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  EXPECT_EQ(a.set_flags.flags, 0u);
  a.set_flags.flags = KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP;  // GFX 12 only
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -EACCES);
  EXPECT_EQ(a.set_flags.flags, KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP);
}

TEST(SimDeviceHwOps, Facts8_AddressWatchSlots) {
  Rig r;
  debugged_target(r, 0);
  for (uint32_t i = 0; i < 4; ++i) {
    auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH);
    a.set_node_address_watch.gpu_id = r.gpu();
    EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
    EXPECT_EQ(a.set_node_address_watch.id, i);
  }
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH);
  a.set_node_address_watch.gpu_id = r.gpu();
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), -ENOMEM);
  EXPECT_EQ(a.set_node_address_watch.id, 4u) << "KFD_DEBUGGER_INVALID_WATCH_POINT_ID";
  auto c = Rig::op(kTarget, KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH);
  c.clear_node_address_watch.gpu_id = r.gpu();
  c.clear_node_address_watch.id = 4;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, c), -EINVAL);
  c.clear_node_address_watch.id = 2;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, c), 0);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, c), -EINVAL) << "not owned any more";
}

// ---- §9 lifetime
// ---------------------------------------------------------------------------------

TEST(SimDeviceLifetime, Facts9_DebuggerExitResumesTargetQueues) {
  Rig r;
  auto q = debugged_target(r, 2);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, q), 2);
  r.host.remove_process(kDebugger);
  r.dev->process_exited(kDebugger);
  EXPECT_FALSE(r.suspended(kTarget, q[0]));
  EXPECT_FALSE(r.suspended(kTarget, q[1]));
  EXPECT_TRUE(r.host.live_refs.empty()) << "event file released";
  // The session is gone: a new debugger can enable.
  r.spawn(500);
  r.attach(500, kTarget);
}

TEST(SimDeviceLifetime, Facts9_PtraceDetachAloneChangesNothing) {
  Rig r;
  auto q = debugged_target(r, 1);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, q), 1);
  r.host.tracers.erase(kTarget);
  EXPECT_TRUE(r.suspended(kTarget, q[0]));
  std::vector<uint32_t> ids{q[0]};
  auto res = r.suspend_resume(kDebugger, kTarget, ids, false);
  EXPECT_EQ(res.ret, -EPERM);
  auto d = Rig::op(kTarget, KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, d), 0);
  EXPECT_FALSE(r.suspended(kTarget, q[0]));
}

TEST(SimDeviceLifetime, Facts9_TargetExitDestroysQueuesThenEsrch) {
  Rig r;
  auto q = debugged_target(r, 2);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, q), 2);
  r.host.remove_process(kTarget);
  r.dev->process_exited(kTarget);
  EXPECT_TRUE(r.dev->queues().empty());
  EXPECT_EQ(r.hws->destroyed.size(), 2u);
  std::vector<uint32_t> ids{q[0]};
  EXPECT_EQ(r.suspend_resume(kDebugger, kTarget, ids, false).ret, -ESRCH);
}

TEST(SimDeviceLifetime, Facts9_BlockedCallsOfExitingProcessAreDropped) {
  Rig r;
  auto q = debugged_target(r, 1);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, q), 1);
  kfd_ioctl_destroy_queue_args d{q[0], 0};
  ASSERT_TRUE(r.raw({kTarget, kTarget}, AMDKFD_IOC_DESTROY_QUEUE, d).blocked);
  r.host.remove_process(kTarget);
  r.dev->process_exited(kTarget);
  EXPECT_TRUE(r.completions.empty());
}

TEST(SimDeviceLifetime, Facts9_EalreadyStillRecordsCallerAsDebugger) {
  // kfd_ioctl_set_debug_trap() records the caller before kfd_dbg_trap_enable() can refuse.
  Rig r;
  auto q = debugged_target(r, 1);
  ASSERT_EQ(r.suspend(kDebugger, kTarget, q), 1);
  r.spawn(600);
  r.host.tracers[kTarget] = 600;
  r.host.open_file(600, 7);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  EXPECT_EQ(r.dbg({600, 600}, a), -EALREADY);
  // The original debugger's exit no longer matches the target's recorded debugger.
  r.host.remove_process(kDebugger);
  r.dev->process_exited(kDebugger);
  EXPECT_TRUE(r.suspended(kTarget, q[0]));
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

TEST(SimDeviceSuspend, Facts8_4_SuspendWritesWaveStateIntoContextSaveHeader) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  auto a = r.aql_queue(kTarget);
  r.host.put<uint64_t>(kTarget, a.ctx_save_restore_address, ~0ull);
  r.host.put<uint64_t>(kTarget, a.ctx_save_restore_address + 8, ~0ull);
  r.host.put<uint64_t>(kTarget, a.ctx_save_restore_address + 16, 0x1234);  // debug_offset/size
  ASSERT_EQ(r.create(kTarget, a), 0);
  r.attach(kDebugger, kTarget);
  r.snapshot(kDebugger, kTarget);
  std::vector<uint32_t> ids{77};  // nothing suspended: the headers stay untouched
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 0);
  EXPECT_EQ(r.host.get<uint64_t>(kTarget, a.ctx_save_restore_address), ~0ull);
  ids = {a.queue_id};
  ASSERT_EQ(r.suspend(kDebugger, kTarget, ids), 1);
  auto h = r.host.get<kfd_context_save_area_header>(kTarget, a.ctx_save_restore_address);
  EXPECT_EQ(h.wave_state.control_stack_offset, a.ctl_stack_size);
  EXPECT_EQ(h.wave_state.control_stack_size, 0u);
  EXPECT_EQ(h.wave_state.wave_state_offset, a.ctl_stack_size);
  EXPECT_EQ(h.wave_state.wave_state_size, 0u);
  EXPECT_EQ(h.debug_offset, 0x1234u) << "only the wave_state part is written";
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

TEST(SimDeviceEvents, Facts8_SendRuntimeEventOrsIntoQueueErrorPayload) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  auto a = r.aql_queue(kTarget);
  const uint64_t payload = r.host.alloc(kTarget, 8);
  r.host.put<uint64_t>(kTarget, payload, 0x1);
  kfd_context_save_area_header h{};
  h.err_payload_addr = payload;
  r.host.put(kTarget, a.ctx_save_restore_address, h);
  ASSERT_EQ(r.create(kTarget, a), 0);
  r.attach(kDebugger, kTarget);
  auto ev = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  ev.send_runtime_event.exception_mask = KFD_EC_MASK(EC_QUEUE_WAVE_TRAP);
  ev.send_runtime_event.queue_id = a.queue_id;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, ev), 0);
  EXPECT_EQ(r.host.get<uint64_t>(kTarget, payload), 0x1 | KFD_EC_MASK(EC_QUEUE_WAVE_TRAP));
  ev.send_runtime_event.queue_id = 99;  // unknown queue: nothing to do, still 0
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, ev), 0);
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

TEST(SimDeviceHwOps, Facts8_AddressWatchSlotsAreSharedByTheDevice) {
  Rig r;
  debugged_target(r, 0);
  r.spawn(700);
  ASSERT_EQ(r.runtime_enable(700), 0);
  r.host.open_file(700, 7);
  auto e = Rig::op(700, KFD_IOC_DBG_TRAP_ENABLE);  // a second, self-debugged process
  e.enable.dbg_fd = 7;
  ASSERT_EQ(r.dbg({700, 700}, e), 0);
  for (int i = 0; i < 3; ++i) {
    auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH);
    a.set_node_address_watch.gpu_id = r.gpu();
    ASSERT_EQ(r.dbg({kDebugger, kDebugger}, a), 0);
  }
  auto b = Rig::op(700, KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH);
  b.set_node_address_watch.gpu_id = r.gpu();
  EXPECT_EQ(r.dbg({700, 700}, b), 0);
  EXPECT_EQ(b.set_node_address_watch.id, 3u);
  EXPECT_EQ(r.dbg({700, 700}, b), -ENOMEM);
  auto c = Rig::op(700, KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH);
  c.clear_node_address_watch.gpu_id = r.gpu();
  c.clear_node_address_watch.id = 0;
  EXPECT_EQ(r.dbg({700, 700}, c), -EINVAL) << "slot 0 belongs to the other process";
  // DISABLE of the first session frees its three slots.
  auto d = Rig::op(kTarget, KFD_IOC_DBG_TRAP_DISABLE);
  ASSERT_EQ(r.dbg({kDebugger, kDebugger}, d), 0);
  EXPECT_EQ(r.dbg({700, 700}, b), 0);
  EXPECT_EQ(b.set_node_address_watch.id, 0u);
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

TEST(SimDeviceDbgTrapFaults, Facts8_UnwritableBuffersAreEfault) {
  Rig r;
  debugged_target(r, 1);
  const uint64_t unmapped = 0x3000;
  auto res = Rig::op(kTarget, KFD_IOC_DBG_TRAP_RESUME_QUEUES);
  res.resume_queues.queue_array_ptr = unmapped;
  res.resume_queues.num_queues = 1;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, res), -EFAULT) << "RESUME_QUEUES array";
  auto qs = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT);
  qs.queue_snapshot.snapshot_buf_ptr = unmapped;
  qs.queue_snapshot.num_queues = 1;
  qs.queue_snapshot.entry_size = 64;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, qs), -EFAULT) << "GET_QUEUE_SNAPSHOT buffer";
  auto ds = Rig::op(kTarget, KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT);
  ds.device_snapshot.snapshot_buf_ptr = unmapped;
  ds.device_snapshot.num_devices = 1;
  ds.device_snapshot.entry_size = 128;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, ds), -EFAULT) << "GET_DEVICE_SNAPSHOT buffer";
  // EC_PROCESS_RUNTIME is raised by a runtime disable; its info copy then faults.
  kfd_ioctl_runtime_enable_args off{0, 0, 0};
  ASSERT_TRUE(r.raw({kTarget, kTarget}, AMDKFD_IOC_RUNTIME_ENABLE, off).blocked);
  auto qi = Rig::op(kTarget, KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO);
  qi.query_exception_info.exception_code = EC_PROCESS_RUNTIME;
  qi.query_exception_info.info_ptr = unmapped;
  qi.query_exception_info.info_size = 16;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, qi), -EFAULT) << "QUERY_EXCEPTION_INFO info";
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

TEST(SimDeviceDbgTrapEnable, Facts8_ActivationFailureShowsInRuntimeStateAndBlocksHwOps) {
  Rig r;
  r.spawn(kTarget);
  r.spawn(kDebugger);
  ASSERT_EQ(r.runtime_enable(kTarget), 0);
  r.new_queue(kTarget);  // something mapped, so activation refreshes the runlist
  r.hws->auto_result = -EBUSY;
  r.host.tracers[kTarget] = kDebugger;
  r.host.open_file(kDebugger, 7);
  const uint64_t rinfo = r.host.alloc(kDebugger, 16);
  auto a = Rig::op(kTarget, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.dbg_fd = 7;
  a.enable.rinfo_ptr = rinfo;
  a.enable.rinfo_size = 16;
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, a), 0) << "activation failures are not returned";
  EXPECT_EQ(r.host.get<kfd_runtime_info>(kDebugger, rinfo).runtime_state,
            DEBUG_RUNTIME_STATE_ENABLED_BUSY);
  r.hws->auto_result = 0;
  std::vector<uint32_t> ids{0};
  EXPECT_EQ(r.suspend_resume(kDebugger, kTarget, ids, true).ret, -EPERM);
  // DISABLE puts the state back to ENABLED without a deactivation runlist.
  const auto before = r.hws->requests.size();
  auto d = Rig::op(kTarget, KFD_IOC_DBG_TRAP_DISABLE);
  EXPECT_EQ(r.dbg({kDebugger, kDebugger}, d), 0);
  EXPECT_EQ(r.hws->requests.size(), before);
  r.attach(kDebugger, kTarget);
  r.snapshot(kDebugger, kTarget);
  EXPECT_EQ(r.suspend(kDebugger, kTarget, ids), 1) << "runtime ENABLED again";
}

}  // namespace
}  // namespace gpreempt::sim::testing
