// sim/device against FACTS §2 (dispatch), §3 (open), §4 (GET_VERSION), §5 (queues) and §6
// (RUNTIME_ENABLE). Each test names the FACTS rule it checks.
#include <cerrno>

#include "device_rig.h"

namespace gpreempt::sim::testing {
namespace {

constexpr int kPid = 100;

unsigned long request(uint32_t nr, uint32_t size) {
  return ioc(IOC_READ | IOC_WRITE, 'K', nr, size);
}

// ---- §2 dispatch -------------------------------------------------------------------------------

TEST(SimDeviceDispatch, Facts2_UnknownNrIsEnotty) {
  Rig r;
  r.spawn(kPid);
  uint64_t junk = 0;
  EXPECT_EQ(r.call({kPid, kPid}, request(0x00, 8), junk), -ENOTTY);  // below COMMAND_START
  EXPECT_EQ(r.call({kPid, kPid}, request(0x28, 8), junk), -ENOTTY);  // COMMAND_END (1.22)
  EXPECT_EQ(r.call({kPid, kPid}, request(0x60, 8), junk), -ENOTTY);
}

TEST(SimDeviceDispatch, Facts1_4_DebuggerIoctlsAreEnottyBelow113) {
  DeviceOptions o;
  o.minor_version = 12;
  Rig r(o);
  r.spawn(kPid);
  kfd_ioctl_runtime_enable_args re{0, 1, 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re), -ENOTTY);
  auto a = Rig::op(kPid, KFD_IOC_DBG_TRAP_ENABLE);
  EXPECT_EQ(r.dbg({kPid, kPid}, a), -ENOTTY);
}

TEST(SimDeviceDispatch, Facts1_1_CreateProcessNrOnlyFrom119) {
  DeviceOptions o;
  o.minor_version = 16;
  Rig r(o);
  r.spawn(kPid);
  uint64_t junk = 0;
  EXPECT_EQ(r.call({kPid, kPid}, ioc(IOC_NONE, 'K', NR_CREATE_PROCESS, 0), junk, 0), -ENOTTY);
}

TEST(SimDeviceDispatch, Facts2_DispatchByNrIgnoresDirectionAndType) {
  Rig r;
  r.spawn(kPid);
  kfd_ioctl_get_version_args v{};
  // Wrong direction bits and type byte: only _IOC_NR counts.
  EXPECT_EQ(r.call({kPid, kPid}, ioc(IOC_WRITE, 'Z', NR_GET_VERSION, 8), v), 0);
  EXPECT_EQ(v.major_version, 1u);
  EXPECT_EQ(v.minor_version, 22u);
}

TEST(SimDeviceDispatch, Facts2_ArgsCopiedBackEvenOnFailure) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid, 256);  // raised to 1024 (1.22) ...
  a.queue_type = 9;                 // ... then rejected
  EXPECT_EQ(r.create(kPid, a), -524);
  EXPECT_EQ(a.ring_size, 1024u);
}

TEST(SimDeviceDispatch, Facts2_CallerSizeHonoured_88ByteCreateQueue) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.sdma_engine_id = 0xdeadbeef;  // beyond the caller's 88 bytes: never read
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_CREATE_QUEUE_V116, a, KFD_CREATE_QUEUE_ARGS_SIZE_V116),
            0);
  EXPECT_EQ(a.queue_id, 0u);
  EXPECT_NE(a.doorbell_offset, 0u);
  EXPECT_EQ(a.sdma_engine_id, 0xdeadbeefu) << "bytes past the caller's size must stay untouched";
}

TEST(SimDeviceDispatch, Facts2_OutOnlyIoctlStartsFromZeroedBuffer) {
  Rig r;
  r.spawn(kPid);
  kfd_ioctl_get_version_args v{77, 77};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_VERSION, v), 0);
  EXPECT_EQ(v.major_version, 1u);
}

// ---- §3 / §4 ------------------------------------------------------------------------------------

TEST(SimDeviceOpen, Facts3_SecondOpenFindsSameProcess) {
  Rig r;
  r.spawn(kPid);
  uint32_t q = r.new_queue(kPid);
  EXPECT_EQ(r.dev->open({kPid, kPid}), 0);
  EXPECT_TRUE(r.exists(kPid, q));
  EXPECT_EQ(r.new_queue(kPid), q + 1) << "same kfd_process: ids continue";
}

TEST(SimDeviceVersion, Facts4_GetVersionConfigurableMinor) {
  DeviceOptions o;
  o.minor_version = 12;
  Rig r(o);
  r.spawn(kPid);
  kfd_ioctl_get_version_args v{};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_VERSION, v), 0);
  EXPECT_EQ(v.major_version, 1u);
  EXPECT_EQ(v.minor_version, 12u);
}

// ---- §5 CREATE_QUEUE validation order and errno
// --------------------------------------------------

TEST(SimDeviceCreateQueue, Facts5_1_PercentageOver100IsEinval_LowByteOnly) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.queue_percentage = 101;
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
  a.queue_percentage = 0x0364;  // bits 8-15 = target XCC, low byte 100: accepted
  EXPECT_EQ(r.create(kPid, a), 0);
}

TEST(SimDeviceCreateQueue, Facts5_2_PriorityOver15IsEinval) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.queue_priority = 16;
  a.queue_percentage = 101;  // step 1 fails first: still EINVAL, from the earlier check
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
  a.queue_percentage = 100;
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
}

TEST(SimDeviceCreateQueue, Facts5_3_KernelRingBaseIsEfault) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.ring_base_address = 0xffff800000000000ull;
  EXPECT_EQ(r.create(kPid, a), -EFAULT);
}

TEST(SimDeviceCreateQueue, Facts5_3_OrderPriorityBeforeRingBase) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.ring_base_address = 0xffff800000000000ull;
  a.queue_priority = 99;
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
}

TEST(SimDeviceCreateQueue, Facts5_4_RingSizeNotPowerOfTwoIsEinval_SmallRaisedTo1024) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid, 3000);
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
  a = r.aql_queue(kPid, 512);
  EXPECT_EQ(r.create(kPid, a), 0);
  EXPECT_EQ(a.ring_size, 1024u);
}

TEST(SimDeviceCreateQueue, Facts5_4_NoRaiseBefore122) {
  DeviceOptions o;
  o.minor_version = 21;
  Rig r(o);
  r.spawn(kPid);
  auto a = r.aql_queue(kPid, 512);
  EXPECT_EQ(r.create(kPid, a), 0);
  EXPECT_EQ(a.ring_size, 512u);
}

TEST(SimDeviceCreateQueue, Facts5_5_MetadataRingSizeNotPowerOfTwoIsEinval_122Only) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.metadata_ring_size = 3;
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
  DeviceOptions o;
  o.minor_version = 21;  // `pad` there
  Rig old(o);
  old.spawn(kPid);
  auto b = old.aql_queue(kPid);
  b.metadata_ring_size = 3;
  EXPECT_EQ(old.create(kPid, b), 0);
}

TEST(SimDeviceCreateQueue, Facts5_6_PointersOutsideUserSpaceAreEfault) {
  Rig r;
  r.spawn(kPid);
  const uint64_t kernel = 0xffffffff81000000ull;
  for (int field = 0; field < 4; ++field) {
    auto a = r.aql_queue(kPid);
    switch (field) {
      case 0:
        a.read_pointer_address = kernel;
        break;
      case 1:
        a.write_pointer_address = kernel;
        break;
      case 2:
        a.eop_buffer_address = kernel;
        break;
      case 3:
        a.ctx_save_restore_address = kernel;
        break;
    }
    EXPECT_EQ(r.create(kPid, a), -EFAULT) << "field " << field;
  }
}

TEST(SimDeviceCreateQueue, Facts5_7_UnknownQueueTypeIsEnotsupp524) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.queue_type = 5;
  EXPECT_EQ(r.create(kPid, a), -524);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
  a.sdma_engine_id = 0;
  EXPECT_EQ(r.create(kPid, a), 0);
  DeviceOptions o;
  o.minor_version = 16;
  Rig old(o);
  old.spawn(kPid);
  auto b = old.aql_queue(kPid);
  b.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
  EXPECT_EQ(old.create(kPid, b), -524) << "BY_ENG_ID only exists from 1.17";
}

TEST(SimDeviceCreateQueue, Facts5_8_UnknownGpuIdIsEinval) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.gpu_id = 0x1234;
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
}

TEST(SimDeviceCreateQueue, Facts5_9_SdmaEngineBeyondDeviceIsEinval) {
  Rig r;
  r.spawn(kPid);
  auto a = r.aql_queue(kPid);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
  a.sdma_engine_id = r.profile_.num_sdma_engines + r.profile_.num_sdma_xgmi_engines;
  EXPECT_EQ(r.create(kPid, a), -EINVAL);
}

TEST(SimDeviceCreateQueue, Facts5_11_QueueCap127_Gfx90a) {
  Rig r({}, "mi210");
  r.spawn(kPid);
  for (int i = 0; i < 127; ++i) ASSERT_EQ(r.new_queue(kPid), static_cast<uint32_t>(i));
  auto a = r.aql_queue(kPid);
  EXPECT_EQ(r.create(kPid, a), -ENOSPC);
}

TEST(SimDeviceCreateQueue, Facts5_11_QueueCap255_Gfx943) {
  Rig r;
  r.spawn(kPid);
  for (int i = 0; i < 255; ++i) ASSERT_EQ(r.new_queue(kPid), static_cast<uint32_t>(i));
  auto a = r.aql_queue(kPid);
  EXPECT_EQ(r.create(kPid, a), -ENOSPC);
}

TEST(SimDeviceCreateQueue, Facts5_12_LowestFreeIdPerProcessReused) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  EXPECT_EQ(r.new_queue(kPid), 0u);
  EXPECT_EQ(r.new_queue(kPid), 1u);
  EXPECT_EQ(r.new_queue(kPid), 2u);
  EXPECT_EQ(r.new_queue(kPid + 1), 0u) << "ids are per process";
  EXPECT_EQ(r.destroy(kPid, 1), 0);
  EXPECT_EQ(r.new_queue(kPid), 1u) << "lowest free slot is reused";
  EXPECT_EQ(r.new_queue(kPid), 3u);
}

TEST(SimDeviceCreateQueue, Facts5_13_NoOversubscriptionPolicyLimitsComputeQueues) {
  DeviceOptions o;
  o.sched_policy = 1;
  Rig r(o);
  r.spawn(kPid);
  for (uint32_t i = 0; i < r.profile_.num_cp_queues; ++i) r.new_queue(kPid);
  auto a = r.aql_queue(kPid);
  EXPECT_EQ(r.create(kPid, a), -EPERM);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;  // the limit is for compute queues
  EXPECT_EQ(r.create(kPid, a), 0);
}

TEST(SimDeviceCreateQueue, Facts5_DoorbellCookieAndQueueIdWrittenBack) {
  Rig r;
  r.spawn(kPid);
  r.new_queue(kPid);
  auto a = r.aql_queue(kPid);
  a.queue_id = 0xffff;
  EXPECT_EQ(r.create(kPid, a), 0);
  EXPECT_EQ(a.queue_id, 1u);
  // KFD_MMAP_TYPE_DOORBELL | gpu_id << 46 | doorbell_id * 8 (SOC15).
  EXPECT_EQ(a.doorbell_offset, (3ull << 62) | (uint64_t{r.gpu()} << 46) | 8u);
}

TEST(SimDeviceCreateQueue, Facts5_NewQueueHasQueueNewAndListIsNewestFirst) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  r.new_queue(kPid);
  r.new_queue(kPid);
  r.new_queue(kPid);
  r.host.tracers[kPid] = kPid + 1;
  r.attach(kPid + 1, kPid);
  auto entries = r.snapshot(kPid + 1, kPid, 8, 0);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].queue_id, 2u);
  EXPECT_EQ(entries[1].queue_id, 1u);
  EXPECT_EQ(entries[2].queue_id, 0u);
  for (const auto& e : entries) EXPECT_EQ(e.exception_status, KFD_EC_MASK(EC_QUEUE_NEW));
}

TEST(SimDeviceCreateQueue, Facts5_QueueNewSignalsSubscribedDebugger) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  int file = r.attach(kPid + 1, kPid, KFD_EC_MASK(EC_QUEUE_NEW));
  r.new_queue(kPid);
  EXPECT_EQ(r.host.signals[file], 1);
}

// ---- §5 DESTROY_QUEUE
// ----------------------------------------------------------------------------

TEST(SimDeviceDestroyQueue, Facts5_UnknownIdIsEinval) {
  Rig r;
  r.spawn(kPid);
  EXPECT_EQ(r.destroy(kPid, 3), -EINVAL);
  uint32_t q = r.new_queue(kPid);
  EXPECT_EQ(r.destroy(kPid, q), 0);
  EXPECT_EQ(r.destroy(kPid, q), -EINVAL);
}

TEST(SimDeviceDestroyQueue, Facts5_RaisesDeviceQueueDeleteToDebugger) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  uint32_t q = r.new_queue(kPid);
  int file = r.attach(kPid + 1, kPid, KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE));
  EXPECT_EQ(r.destroy(kPid, q), 0);
  EXPECT_EQ(r.host.signals[file], 1);
  auto a = Rig::op(kPid, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
  a.query_debug_event.exception_mask = KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE);
  EXPECT_EQ(r.dbg({kPid + 1, kPid + 1}, a), 0);
  EXPECT_EQ(a.query_debug_event.exception_mask, KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE));
  EXPECT_EQ(a.query_debug_event.gpu_id, r.gpu());
  EXPECT_EQ(a.query_debug_event.queue_id, 0u);
}

// ---- UPDATE_QUEUE
// -----------------------------------------------------------------------------------

TEST(SimDeviceUpdateQueue, ValidationAndUnknownQueue) {
  Rig r;
  r.spawn(kPid);
  uint32_t q = r.new_queue(kPid);
  kfd_ioctl_update_queue_args u{0x7f0000100000ull, q, 4096, 101, 5};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_UPDATE_QUEUE, u), -EINVAL);
  u.queue_percentage = 50;
  u.queue_priority = 16;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_UPDATE_QUEUE, u), -EINVAL);
  u.queue_priority = 5;
  u.queue_id = 99;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_UPDATE_QUEUE, u), -EFAULT);
  u.queue_id = q;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_UPDATE_QUEUE, u), 0);
  auto views = r.dev->queues();
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].priority, 5u);
  EXPECT_EQ(views[0].ring_size, 4096u);
}

// ---- §6 RUNTIME_ENABLE --------------------------------------------------------------------------

TEST(SimDeviceRuntimeEnable, Facts6_SecondEnableIsEbusy) {
  Rig r;
  r.spawn(kPid);
  EXPECT_EQ(r.runtime_enable(kPid), 0);
  EXPECT_EQ(r.runtime_enable(kPid), -EBUSY);
}

TEST(SimDeviceRuntimeEnable, Facts6_EnableAfterQueueIsEexist) {
  Rig r;
  r.spawn(kPid);
  r.new_queue(kPid);
  EXPECT_EQ(r.runtime_enable(kPid), -EEXIST);
}

TEST(SimDeviceRuntimeEnable, Facts6_EnableBlocksWhileDebuggedUntilRuntimeEvent) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  int file = r.attach(kPid + 1, kPid);
  kfd_ioctl_runtime_enable_args re{0xabc, KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, 0};
  auto res = r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re);
  ASSERT_TRUE(res.blocked);
  const CallToken t = r.last_token;
  EXPECT_EQ(r.host.signals[file], 1) << "EC_PROCESS_RUNTIME raised to the debugger";
  EXPECT_FALSE(r.completions.count(t));
  auto ev = Rig::op(kPid, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  ev.send_runtime_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
  EXPECT_EQ(r.dbg({kPid + 1, kPid + 1}, ev), 0);
  ASSERT_TRUE(r.completions.count(t));
  EXPECT_EQ(r.completions[t].ret, 0);
  EXPECT_EQ(r.completions[t].args.size(), sizeof(re));
}

TEST(SimDeviceRuntimeEnable, Facts6_DisableBlocksAndResumesSuspendedQueues) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  ASSERT_EQ(r.runtime_enable(kPid), 0);
  uint32_t q = r.new_queue(kPid);
  r.attach(kPid + 1, kPid);
  r.snapshot(kPid + 1, kPid);
  std::vector<uint32_t> ids{q};
  ASSERT_EQ(r.suspend(kPid + 1, kPid, ids), 1);
  kfd_ioctl_runtime_enable_args re{0, 0, 0};
  auto res = r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re);
  EXPECT_TRUE(res.blocked);
  EXPECT_FALSE(r.suspended(kPid, q)) << "runtime disable deactivates the session: queues resumed";
  auto ev = Rig::op(kPid, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  ev.send_runtime_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
  EXPECT_EQ(r.dbg({kPid + 1, kPid + 1}, ev), 0);
  EXPECT_EQ(r.completions.at(r.last_token - 1).ret, 0);
}

TEST(SimDeviceRuntimeEnable, Facts6_InterruptedWaitRetriesWithoutChecks) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  r.attach(kPid + 1, kPid);
  kfd_ioctl_runtime_enable_args re{0, KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, 0};
  ASSERT_TRUE(r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked);
  r.dev->cancel(r.last_token);  // signal: -EINTR to user space, retry flag set
  // The retried call skips the EBUSY check (state is already ENABLED) and waits again.
  ASSERT_TRUE(r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked);
  const CallToken t = r.last_token;
  auto ev = Rig::op(kPid, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  ev.send_runtime_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
  EXPECT_EQ(r.dbg({kPid + 1, kPid + 1}, ev), 0);
  EXPECT_EQ(r.completions.at(t).ret, 0);
  EXPECT_EQ(r.completions.size(), 1u) << "the cancelled call never completes";
}

TEST(SimDeviceRuntimeEnable, ASignalEndsTheWaitForTheDebuggerWithEintr) {
  // runtime_enable's down_interruptible: -EINTR now, and the retry flag makes the next call go
  // straight back to waiting.
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  r.attach(kPid + 1, kPid);
  kfd_ioctl_runtime_enable_args re{0, KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, 0};
  ASSERT_TRUE(r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked);
  const CallToken interrupted = r.last_token;
  EXPECT_TRUE(r.dev->interrupt(interrupted, 0, 0));
  ASSERT_TRUE(r.completions.count(interrupted));
  EXPECT_EQ(r.completions.at(interrupted).ret, -EINTR);
  ASSERT_TRUE(r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked) << "waits again";
  const CallToken t = r.last_token;
  auto ev = Rig::op(kPid, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  ev.send_runtime_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
  EXPECT_EQ(r.dbg({kPid + 1, kPid + 1}, ev), 0);
  EXPECT_EQ(r.completions.at(t).ret, 0);
}

TEST(SimDeviceRuntimeEnable, ASignalDuringTheRunlistWaitEndsTheLaterWaitForTheDebugger) {
  // Activating the debug session rebuilds the runlist (an uninterruptible wait in the kernel):
  // a signal then stays pending, and down_interruptible, reached afterwards, returns -EINTR.
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  r.spawn(kPid + 2);
  r.new_queue(kPid + 2);  // another process's queue: the GPU has a runlist to rebuild
  r.attach(kPid + 1, kPid);
  r.hws->auto_complete = false;
  kfd_ioctl_runtime_enable_args re{0, KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, 0};
  ASSERT_TRUE(r.raw({kPid, kPid}, AMDKFD_IOC_RUNTIME_ENABLE, re).blocked);
  const CallToken t = r.last_token;
  ASSERT_EQ(r.hws->outstanding(), 1u) << "the enable waits for the scheduler";
  EXPECT_FALSE(r.dev->interrupt(t, 0, 0)) << "the runlist wait goes on";
  EXPECT_FALSE(r.completions.count(t));
  while (r.hws->outstanding()) r.hws->complete_next();
  ASSERT_TRUE(r.completions.count(t));
  EXPECT_EQ(r.completions.at(t).ret, -EINTR);
}

TEST(SimDeviceRuntimeEnable, Facts8_RuntimeEventBeforeWaitIsCounted) {
  Rig r;
  r.spawn(kPid);
  r.spawn(kPid + 1);
  r.attach(kPid + 1, kPid);
  auto ev = Rig::op(kPid, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  ev.send_runtime_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
  EXPECT_EQ(r.dbg({kPid + 1, kPid + 1}, ev), 0);  // up() on the semaphore
  EXPECT_EQ(r.runtime_enable(kPid), 0) << "down() succeeds at once";
}

TEST(SimDeviceRuntimeEnable, Facts6_WithoutDebuggerReturnsAtOnce) {
  Rig r;
  r.spawn(kPid);
  EXPECT_EQ(r.runtime_enable(kPid), 0);
  EXPECT_EQ(r.runtime_enable(kPid, false), 0);
  EXPECT_EQ(r.runtime_enable(kPid), 0);
}

}  // namespace
}  // namespace gpreempt::sim::testing
