// The simulated CP on real AQL packets in a real address space (this test process's, reached
// through process_vm_readv/writev exactly as the daemon reaches a workload's).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <set>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "gpreempt/kfd_abi.h"
#include "sim/gpu/aql.h"
#include "sim/gpu/gpu_model.h"
#include "sim/gpu/sdma.h"

namespace gpreempt::sim::gpu {
namespace {

constexpr uint32_t kGpu = 0x1a2b;

struct alignas(64) Signal {
  int64_t kind = aql::kSignalKindUser;
  int64_t value = 0;
  uint64_t mailbox = 0;
  uint32_t event_id = 0;
  uint32_t reserved = 0;
  uint64_t start_ts = 0;
  uint64_t end_ts = 0;
  uint64_t pad[2] = {};
};
static_assert(sizeof(Signal) == aql::kSignalSize);

// A ring and an amd_queue_t-shaped block in this process, as a runtime would lay them out.
struct HostQueue {
  uint32_t id;
  std::vector<aql::KernelDispatchPacket> ring;
  alignas(64) uint8_t amd_queue[aql::kAmdQueueSize] = {};
  explicit HostQueue(uint32_t qid, std::size_t slots = 16) : id(qid), ring(slots) {
    for (auto& p : ring) p.header = aql::kPacketTypeInvalid;
  }
  uint64_t& write_id() { return *reinterpret_cast<uint64_t*>(amd_queue + aql::kAmdQueueWriteDispatchId); }
  uint64_t read_id() const {
    uint64_t v;
    std::memcpy(&v, amd_queue + aql::kAmdQueueReadDispatchId, sizeof v);
    return v;
  }
  QueueView view(uint32_t priority = 7) const {
    QueueView v;
    v.pid = getpid();
    v.queue_id = id;
    v.gpu_id = kGpu;
    v.uapi_type = kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
    v.ring_base = reinterpret_cast<uint64_t>(ring.data());
    v.ring_size = ring.size() * aql::kPacketSize;
    v.write_pointer_address = reinterpret_cast<uint64_t>(amd_queue + aql::kAmdQueueWriteDispatchId);
    v.read_pointer_address = reinterpret_cast<uint64_t>(amd_queue + aql::kAmdQueueReadDispatchId);
    v.priority = priority;
    return v;
  }
  aql::KernelDispatchPacket& slot() { return ring[write_id() % ring.size()]; }
  void dispatch(const aql::KernelDescriptor& d, uint32_t items, Signal* done) {
    auto& p = slot();
    std::memset(&p, 0, sizeof p);
    p.setup = 1;
    p.workgroup_size_x = 256;
    p.workgroup_size_y = p.workgroup_size_z = 1;
    p.grid_size_x = items;
    p.grid_size_y = p.grid_size_z = 1;
    p.kernel_object = reinterpret_cast<uint64_t>(&d);
    p.completion_signal = reinterpret_cast<uint64_t>(done);
    p.header = aql::kPacketTypeKernelDispatch | (1 << aql::kHeaderBarrier);
    ++write_id();
  }
  void barrier_and(std::vector<Signal*> deps, Signal* done) {
    aql::BarrierAndPacket b{};
    for (std::size_t i = 0; i < deps.size(); ++i) b.dep_signal[i] = reinterpret_cast<uint64_t>(deps[i]);
    b.completion_signal = reinterpret_cast<uint64_t>(done);
    b.header = aql::kPacketTypeBarrierAnd | (1 << aql::kHeaderBarrier);
    std::memcpy(&slot(), &b, sizeof b);
    ++write_id();
  }
};

aql::KernelDescriptor descriptor(const char* name, uint64_t wg_ns) {
  aql::KernelDescriptor d{};
  d.magic = aql::kKernelDescriptorMagic;
  d.wg_cost_ns = wg_ns;
  std::strncpy(d.name, name, sizeof d.name - 1);
  return d;
}

struct Cp : ::testing::Test {
  ProcessVmMemory mem;
  GpuModelOptions opt = [] {
    GpuModelOptions o;
    o.engine.remap_on_queue_change = false;
    return o;
  }();
  GpuModel model{opt, mem};
  SimTime run() { return model.run_until_idle(10'000'000'000); }
};

TEST_F(Cp, ExecutesDispatchPacketsAdvancesReadIdAndDecrementsSignals) {
  HostQueue q(0);
  model.queue_created(q.view());
  const auto d = descriptor("gemm", 50'000);
  Signal s;
  s.value = 2;
  q.dispatch(d, 256 * 640, &s);  // one full round on MI308X
  q.dispatch(d, 256 * 8, &s);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(q.read_id(), 2u);
  EXPECT_EQ(s.value, 0);
  // The slots were handed back and the signal carries the simulated times of the last packet.
  EXPECT_EQ(q.ring[0].header & 0xff, aql::kPacketTypeInvalid);
  EXPECT_EQ(q.ring[1].header & 0xff, aql::kPacketTypeInvalid);
  // In ticks of the GPU's 100 MHz timestamp counter, the one GET_CLOCK_COUNTERS reads.
  const auto& p = model.options().profile;
  EXPECT_EQ(s.end_ts, static_cast<uint64_t>(2 * (p.packet_overhead_ns + 50'000)) / 10);
  EXPECT_EQ(s.start_ts, static_cast<uint64_t>(p.packet_overhead_ns + 50'000) / 10);
  EXPECT_EQ(model.gpu_clock_counter(), static_cast<uint64_t>(model.now()) / 10);
  const auto st = model.queue_stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].completed, 2u);
  EXPECT_TRUE(st[0].error.empty()) << st[0].error;
}

TEST_F(Cp, GpuClockCounterReadsTheClockTheSignalsAreStampedWith) {
  // GET_CLOCK_COUNTERS reads this counter; ROCr translates a signal's ticks with two of its
  // samples and rejects ticks before the first ("time stamps may be invalid").
  SimTime wall = 7'000'000;
  model.set_clock([&wall] { return wall; });
  EXPECT_EQ(model.gpu_clock_counter(), 700'000u);
  HostQueue q(0);
  model.queue_created(q.view());
  const auto d = descriptor("k", 20'000'000);
  Signal s;
  s.value = 1;
  q.dispatch(d, 256, &s);
  model.doorbell(getpid(), 0);
  run();
  ASSERT_EQ(s.value, 0);
  EXPECT_EQ(model.gpu_clock_counter(), static_cast<uint64_t>(model.now()) / 10)
      << "never behind a stamp already written";
  EXPECT_LE(s.end_ts, model.gpu_clock_counter());
  wall = model.now() + 5'000;
  EXPECT_EQ(model.gpu_clock_counter(), static_cast<uint64_t>(wall) / 10);
}

TEST_F(Cp, UnpublishedPacketIsNotExecuted) {
  HostQueue q(0);
  model.queue_created(q.view());
  ++q.write_id();  // the index moved but the header is still INVALID
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(q.read_id(), 0u);
  const auto d = descriptor("late", 1000);
  Signal s;
  s.value = 1;
  --q.write_id();
  q.dispatch(d, 256, &s);
  model.poll();  // no doorbell: the CP's write-pointer poll finds it
  run();
  EXPECT_EQ(q.read_id(), 1u);
  EXPECT_EQ(s.value, 0);
}

TEST_F(Cp, BarrierAndWaitsForSignalsSetByTheHost) {
  HostQueue q(0);
  model.queue_created(q.view());
  Signal dep, bar, after;
  dep.value = 1;
  bar.value = 1;
  after.value = 1;
  const auto d = descriptor("after", 1000);
  q.barrier_and({&dep}, &bar);
  q.dispatch(d, 256, &after);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(q.read_id(), 0u);
  EXPECT_EQ(bar.value, 1);
  dep.value = 0;
  model.poll();
  run();
  EXPECT_EQ(bar.value, 0);
  EXPECT_EQ(after.value, 0);
  EXPECT_EQ(q.read_id(), 2u);
}

TEST_F(Cp, BarrierAndOrdersWorkAcrossQueues) {
  HostQueue producer(0), consumer(1);
  model.queue_created(producer.view());
  model.queue_created(consumer.view());
  Signal produced, gate, consumed;
  produced.value = 1;
  gate.value = 1;
  consumed.value = 1;
  const auto slow = descriptor("produce", 1'000'000);
  const auto fast = descriptor("consume", 1'000);
  producer.dispatch(slow, 256, &produced);
  consumer.barrier_and({&produced}, &gate);
  consumer.dispatch(fast, 256, &consumed);
  model.doorbell(getpid(), 0);
  model.doorbell(getpid(), 1);
  run();
  EXPECT_EQ(consumed.value, 0);
  EXPECT_GE(consumed.start_ts, produced.end_ts);
}

TEST_F(Cp, BadKernelObjectStopsTheQueueWithAReason) {
  HostQueue q(0);
  model.queue_created(q.view());
  aql::KernelDescriptor junk{};
  Signal s;
  s.value = 1;
  q.dispatch(junk, 256, &s);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(s.value, 1);
  const auto st = model.queue_stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_NE(st[0].error.find("kernel descriptor"), std::string::npos) << st[0].error;
}

TEST_F(Cp, RealAmdhsaKernelDescriptorRunsAsAGenericKernel) {
  // A compiled kernel's descriptor (clang -mcpu=gfx90a, the probe's fill.kd): entry offset 0x1040
  // at byte 16, compute_pgm_rsrc1 0x008c00af at 48. Its ISA is not run; the packet completes.
  std::array<uint8_t, 64> kd{};
  kd[8] = 0x0c;  // kernarg_size 12
  kd[16] = 0x40;
  kd[17] = 0x10;
  const uint32_t rsrc1 = 0x008c00af, rsrc2 = 0x00000090;
  std::memcpy(&kd[48], &rsrc1, sizeof rsrc1);
  std::memcpy(&kd[52], &rsrc2, sizeof rsrc2);
  aql::KernelDescriptor real;
  std::memcpy(&real, kd.data(), sizeof real);
  ASSERT_NE(real.magic, aql::kKernelDescriptorMagic);
  HostQueue q(0);
  model.queue_created(q.view());
  Signal s;
  s.value = 1;
  q.dispatch(real, 256, &s);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(s.value, 0);
  const auto st = model.queue_stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_TRUE(st[0].error.empty()) << st[0].error;
}

// ROCr 5.2's blit kernels as GpuAgent::AssembleShader lays them out: an amd_kernel_code_t header
// with only the entry offset (256), the kernarg-pointer input, two user SGPRs, workgroup id X and
// the register granules set; (count - 1) / 8 SGPR and (count - 1) / 4 VGPR granules.
std::array<uint8_t, 256 + 16> rocr_blit_code(int sgprs, int vgprs) {
  std::array<uint8_t, 256 + 16> code{};
  const int64_t entry = 256;
  const uint32_t rsrc1 = static_cast<uint32_t>((vgprs - 1) / 4) |
                         (static_cast<uint32_t>((sgprs - 1) / 8) << 6) | (3u << 16) | (1u << 23);
  const uint32_t rsrc2 = (2u << 1) | (1u << 7);
  const uint32_t properties = 1u << 3;
  std::memcpy(&code[16], &entry, sizeof entry);
  std::memcpy(&code[48], &rsrc1, sizeof rsrc1);
  std::memcpy(&code[52], &rsrc2, sizeof rsrc2);
  std::memcpy(&code[56], &properties, sizeof properties);
  code[256] = 0x81;  // s_endpgm's last byte: machine code follows the header
  return code;
}

// BlitKernel::PopulateQueue: one dimension, workgroups of 64, the grid the work-item count.
void blit_dispatch(HostQueue& q, const void* code, const void* args, uint32_t items, Signal* done) {
  auto& p = q.slot();
  std::memset(&p, 0, sizeof p);
  p.setup = 1;
  p.workgroup_size_x = 64;
  p.workgroup_size_y = p.workgroup_size_z = 1;
  p.grid_size_x = items;
  p.grid_size_y = p.grid_size_z = 1;
  p.kernel_object = reinterpret_cast<uint64_t>(code);
  p.kernarg_address = reinterpret_cast<uint64_t>(args);
  p.completion_signal = reinterpret_cast<uint64_t>(done);
  p.header = aql::kPacketTypeKernelDispatch | (1 << aql::kHeaderBarrier);
  ++q.write_id();
}

// BlitKernel::KernelArgs (ROCr 5.2 amd_blit_kernel.h).
struct alignas(16) CopyAlignedArgs {
  uint64_t p1_src, p1_dst, p2_src, p2_dst, p3_src, p3_dst, p4_src, p4_dst, p4_src_end, p4_dst_end;
  uint32_t num_workitems;
};
struct alignas(16) CopyMisalignedArgs {
  uint64_t p1_src, p1_dst, p2_src, p2_dst, p2_src_end, p2_dst_end;
  uint32_t num_workitems;
};
struct alignas(16) FillArgs {
  uint64_t p1_dst, p2_dst, p2_dst_end;
  uint32_t value, num_workitems;
};
// The kernel reads 96 bytes of arguments, as ROCr's ring of KernelArgs always has them.
template <typename T>
struct alignas(16) ArgSlot {
  T args{};
  uint8_t pad[96] = {};
};

std::vector<uint8_t> pattern(std::size_t n) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

TEST_F(Cp, RocrCopyKernelsMoveTheirBytesWhenTheyComplete) {
  // The loader's hsa_executable_freeze copies the code object into VRAM with CopyAligned (same
  // alignment mod 4) or CopyMisaligned; the CP runs no ISA but the bytes must arrive.
  const auto aligned = rocr_blit_code(32, 12), misaligned = rocr_blit_code(23, 10);
  const std::vector<uint8_t> src = pattern(70'001);
  std::vector<uint8_t> dst_a(src.size() + 8, 0), dst_m(src.size() + 8, 0);
  const uint32_t items = 64 * 4 * 104;  // 64 * 4 * (CUs of an MI210)
  ArgSlot<CopyAlignedArgs> a;
  const uint64_t s0 = reinterpret_cast<uint64_t>(src.data()), d0 = reinterpret_cast<uint64_t>(dst_a.data());
  a.args = {s0, d0, s0 + 16, d0 + 16, s0 + 65536, d0 + 65536, s0 + 70000, d0 + 70000,
            s0 + src.size(), d0 + src.size(), items};
  ArgSlot<CopyMisalignedArgs> m;
  const uint64_t d1 = reinterpret_cast<uint64_t>(dst_m.data()) + 1;
  m.args = {s0, d1, s0 + 65536, d1 + 65536, s0 + src.size(), d1 + src.size(), items};
  HostQueue q(0);
  model.queue_created(q.view());
  Signal done;
  done.value = 2;
  blit_dispatch(q, aligned.data(), &a, items, &done);
  blit_dispatch(q, misaligned.data(), &m, items, &done);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(done.value, 0);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst_a.begin()));
  EXPECT_EQ(dst_a[src.size()], 0) << "a byte past the end was written";
  EXPECT_EQ(dst_m[0], 0);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst_m.begin() + 1));
  EXPECT_EQ(dst_m[src.size() + 1], 0);
  EXPECT_EQ(model.blits_completed(), 2u);
  EXPECT_EQ(model.stats_json()["rocr_blits"], 2);
}

TEST_F(Cp, RocrFillKernelWritesItsDword) {
  const auto fill = rocr_blit_code(19, 8);
  std::vector<uint32_t> buf(5000, 7);
  const uint32_t items = 64 * 104;
  ArgSlot<FillArgs> f;
  const uint64_t d = reinterpret_cast<uint64_t>(buf.data()) + 4;
  f.args = {d, d + 4096, d + 4 * 4998, 0xdeadbeef, items};
  HostQueue q(0);
  model.queue_created(q.view());
  Signal done;
  done.value = 1;
  blit_dispatch(q, fill.data(), &f, items, &done);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(done.value, 0);
  EXPECT_EQ(buf[0], 7u);
  for (std::size_t i = 1; i < 4999; ++i) ASSERT_EQ(buf[i], 0xdeadbeefu) << i;
  EXPECT_EQ(buf[4999], 7u);
}

TEST_F(Cp, OnlyRocrsBlitDispatchesCopy) {
  const auto aligned = rocr_blit_code(32, 12);
  const std::vector<uint8_t> src = pattern(4096);
  std::vector<uint8_t> dst(4096, 0);
  const uint32_t items = 64 * 4 * 104;
  const uint64_t s0 = reinterpret_cast<uint64_t>(src.data()), d0 = reinterpret_cast<uint64_t>(dst.data());
  ArgSlot<CopyAlignedArgs> a;
  a.args = {s0, d0, s0, d0, s0, d0, s0, d0, s0 + 4096, d0 + 4096, items};
  // Another grid than the arguments' work-item count; a compiled kernel's v3 descriptor (its
  // segment sizes in the first bytes) with ROCr's register counts; a header that enables the
  // dispatch pointer too, as a compiler's kernels do.
  auto v3 = aligned;
  v3[8] = 0x54;  // kernarg_size
  auto dispatch_ptr = aligned;
  dispatch_ptr[56] |= 1u << 1;
  HostQueue q(0);
  model.queue_created(q.view());
  Signal done;
  done.value = 3;
  blit_dispatch(q, aligned.data(), &a, items + 64, &done);
  blit_dispatch(q, v3.data(), &a, items, &done);
  blit_dispatch(q, dispatch_ptr.data(), &a, items, &done);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(done.value, 0) << "they run as generic kernels";
  EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(model.blits_completed(), 0u);
}

TEST_F(Cp, RocrBlitToAnUnmappedAddressStopsTheQueue) {
  const auto aligned = rocr_blit_code(32, 12);
  const std::vector<uint8_t> src = pattern(4096);
  const uint32_t items = 64 * 4 * 104;
  const uint64_t s0 = reinterpret_cast<uint64_t>(src.data()), d0 = 0x10000;  // the first 64 KiB are never mapped
  ArgSlot<CopyAlignedArgs> a;
  a.args = {s0, d0, s0, d0, s0, d0, s0, d0, s0 + 4096, d0 + 4096, items};
  HostQueue q(0);
  model.queue_created(q.view());
  Signal done;
  done.value = 1;
  blit_dispatch(q, aligned.data(), &a, items, &done);
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(done.value, 1);
  const auto st = model.queue_stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_NE(st[0].error.find("not mapped"), std::string::npos) << st[0].error;
}

// An SDMA queue in this process as ROCr's BlitSdma lays it out: a byte ring and 64-bit monotonic
// byte indices.
struct HostSdmaQueue {
  uint32_t id = 0;
  std::vector<uint32_t> ring;
  alignas(8) uint64_t wptr = 0;
  alignas(8) uint64_t rptr = 0;
  explicit HostSdmaQueue(uint32_t qid, std::size_t dwords = 256) : id(qid), ring(dwords, 0) {}
  QueueView view() const {
    QueueView v;
    v.pid = getpid();
    v.queue_id = id;
    v.gpu_id = kGpu;
    v.uapi_type = kfd::KFD_IOC_QUEUE_TYPE_SDMA;
    v.ring_base = reinterpret_cast<uint64_t>(ring.data());
    v.ring_size = ring.size() * 4;
    v.write_pointer_address = reinterpret_cast<uint64_t>(&wptr);
    v.read_pointer_address = reinterpret_cast<uint64_t>(&rptr);
    return v;
  }
  // Appends a packet (wrapping at the ring's end); the write pointer moves with commit().
  uint64_t staged = 0;
  void put(std::initializer_list<uint32_t> dws) {
    for (uint32_t d : dws) ring[(staged / 4) % ring.size()] = d, staged += 4;
  }
  static uint32_t lo(const void* p) { return static_cast<uint32_t>(reinterpret_cast<uint64_t>(p)); }
  static uint32_t hi(const void* p) { return static_cast<uint32_t>(reinterpret_cast<uint64_t>(p) >> 32); }
  void copy(void* dst, const void* src, uint32_t bytes) {
    put({sdma::kOpCopy | sdma::kSubOpCopyLinear << 8, bytes - 1, 0, lo(src), hi(src), lo(dst), hi(dst)});
  }
  void fill(void* dst, uint32_t value, uint32_t bytes) {
    put({sdma::kOpConstFill | 2u << 30, lo(dst), hi(dst), value, bytes - 1});
  }
  void poll_eq(const void* a, uint32_t value) {
    put({sdma::kOpPollRegMem | 3u << 28 | 1u << 31, lo(a), hi(a), value, 0xffffffff, 0x0fff0004});
  }
  void decrement(const void* a) {
    put({sdma::kOpAtomic | sdma::kAtomicAdd64 << 25, lo(a), hi(a), 0xffffffff, 0xffffffff, 0, 0, 0});
  }
  void fence(const void* a, uint32_t value) { put({sdma::kOpFence, lo(a), hi(a), value}); }
  void timestamp(const void* a) { put({sdma::kOpTimestamp | sdma::kSubOpTimestampGetGlobal << 8, lo(a), hi(a)}); }
  void trap(uint32_t ctx) { put({sdma::kOpTrap, ctx}); }
  void commit() { wptr = staged; }
};

TEST_F(Cp, SdmaEngineRunsRocrsCopyPacketsAndCompletesTheSignal) {
  // What ROCr's BlitSdma::SubmitCommand writes for a copy with a dependency, profiling and an
  // interrupt signal: polls on the dependency, a timestamp, the HDP flush, the copy, a timestamp,
  // the atomic decrement of the signal, the mailbox fence and the trap.
  HostSdmaQueue q(3);
  model.queue_created(q.view());
  model.set_clock([] { return SimTime{5'000'000}; });
  const std::vector<uint8_t> src = pattern(10'001);
  std::vector<uint8_t> dst(10'008, 0);
  std::vector<uint32_t> filled(64, 1);
  alignas(8) int64_t dep = 1;
  Signal done;
  done.value = 1;
  alignas(8) uint64_t ts[2] = {0, 0};
  alignas(8) uint64_t mailbox = 0;
  q.poll_eq(reinterpret_cast<uint32_t*>(&dep) + 1, 0);
  q.poll_eq(&dep, 0);
  q.timestamp(&ts[0]);
  q.put({sdma::kOpPollRegMem, 0, 0, 0, 0, 0});  // HDP flush: a register poll
  q.copy(dst.data() + 3, src.data(), static_cast<uint32_t>(src.size()));
  q.fill(filled.data() + 1, 0xabcd1234, 62 * 4);
  q.timestamp(&ts[1]);
  q.decrement(&done.value);
  q.fence(&mailbox, 77);
  q.trap(77);
  q.commit();
  model.poll();
  EXPECT_EQ(q.rptr, 24u) << "the value's high half is 0 already; waits at the low half's poll";
  EXPECT_EQ(done.value, 1);
  dep = 0;
  model.poll();
  EXPECT_EQ(q.rptr, q.wptr);
  EXPECT_EQ(done.value, 0);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + 3));
  EXPECT_EQ(dst[2], 0);
  EXPECT_EQ(dst[3 + src.size()], 0);
  EXPECT_EQ(filled[0], 1u);
  for (int i = 1; i < 63; ++i) ASSERT_EQ(filled[i], 0xabcd1234u) << i;
  EXPECT_EQ(filled[63], 1u);
  EXPECT_EQ(ts[0], 500'000u) << "the GPU's timestamp counter";
  EXPECT_EQ(ts[1], 500'000u);
  EXPECT_EQ(mailbox, 77u);
  EXPECT_EQ(model.take_interrupted(), std::set<int>{getpid()});
  EXPECT_EQ(model.take_signalled(), std::set<int>{getpid()});
  const auto j = model.stats_json()["sdma_queues"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["error"], "");
  EXPECT_EQ(j[0]["packets"], 10);
}

TEST_F(Cp, ASuspendedSdmaQueueCopiesNothingUntilItsResume) {
  // KFD maps SDMA queues in the HWS runlist with the compute queues: a runlist without the SDMA
  // queue (SUSPEND_QUEUES naming it) stops its engine, and one with it runs it again.
  HostSdmaQueue q(3);
  model.queue_created(q.view());
  const std::vector<uint8_t> src = pattern(4096);
  std::vector<uint8_t> dst(4096, 0);
  int done = 1;
  model.execute_runlist(kGpu, 0, {}, [&](int r) { done = r; });
  run();
  ASSERT_EQ(done, 0);
  q.copy(dst.data(), src.data(), static_cast<uint32_t>(src.size()));
  q.commit();
  model.poll();
  EXPECT_EQ(q.rptr, 0u) << "suspended: the engine fetches nothing";
  EXPECT_EQ(dst[0], 0);
  EXPECT_EQ(model.stats_json()["sdma_queues"][0]["mapped"], false);
  done = 1;
  model.execute_runlist(kGpu, 0, {q.view()}, [&](int r) { done = r; });
  run();
  ASSERT_EQ(done, 0);
  model.poll();
  EXPECT_EQ(q.rptr, q.wptr);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));
  EXPECT_EQ(model.stats_json()["sdma_queues"][0]["mapped"], true);
  // A queue created suspended (a new queue of a process whose queues are held) starts stopped.
  HostSdmaQueue held(4);
  QueueView v = held.view();
  v.suspended = true;
  model.queue_created(v);
  held.fill(dst.data(), 0x11111111, 64);
  held.commit();
  model.poll();
  EXPECT_EQ(held.rptr, 0u);
}

TEST_F(Cp, SdmaCopyCountReadsThirtyBits) {
  // ROCr 6.1 writes copies over 4 MiB in one packet where the engine takes them (count_ext).
  HostSdmaQueue q(3);
  model.queue_created(q.view());
  const std::vector<uint8_t> src = pattern((5u << 20) + 3);
  std::vector<uint8_t> dst(src.size() + 1, 0);
  q.copy(dst.data(), src.data(), static_cast<uint32_t>(src.size()));
  q.commit();
  model.poll();
  EXPECT_EQ(q.rptr, q.wptr);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));
  EXPECT_EQ(dst.back(), 0);
}

TEST_F(Cp, SdmaRingWrapsThroughRocrsNopPaddingAndStopsAtUnknownPackets) {
  HostSdmaQueue q(3, 16);  // 64 bytes
  model.queue_created(q.view());
  Signal done;
  done.value = 2;
  // ROCr pads the ring's end with zero dwords (NOPs) when a command would not fit.
  q.decrement(&done.value);  // 32 bytes
  q.put({0, 0, 0, 0, 0, 0, 0, 0});
  q.decrement(&done.value);  // wrapped to the start
  q.commit();
  model.poll();
  EXPECT_EQ(done.value, 0);
  EXPECT_EQ(q.rptr, 96u) << "the read pointer keeps growing";
  q.put({0x00ff, 0});  // an opcode the engine does not know
  q.commit();
  model.poll();
  const auto j = model.stats_json()["sdma_queues"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_NE(j[0]["error"].get<std::string>().find("op 255"), std::string::npos) << j[0]["error"];
  EXPECT_EQ(q.rptr, 96u);
  model.queue_destroyed(getpid(), 3, kGpu);
  EXPECT_TRUE(model.stats_json()["sdma_queues"].empty());
}

TEST_F(Cp, AmdVendorPacketsPm4IbCompletesBarrierValueWaits) {
  HostQueue q(0);
  model.queue_created(q.view());
  // A PM4 indirect buffer (ROCr's cache invalidation at hsa_executable_freeze): nothing to do.
  Signal ib_done;
  ib_done.value = 1;
  std::array<uint8_t, 64> ib{};
  ib[2] = aql::kAmdFormatPm4Ib;  // header 0 = vendor type; AmdFormat in byte 2
  const uint64_t ib_sig = reinterpret_cast<uint64_t>(&ib_done);
  std::memcpy(&ib[56], &ib_sig, sizeof ib_sig);
  std::memcpy(&q.slot(), ib.data(), ib.size());
  ++q.write_id();
  // A barrier-value packet: waits until (gate & 0xff) == 3.
  Signal gate, bv_done;
  gate.value = 0x100;
  bv_done.value = 1;
  aql::AmdBarrierValuePacket bv{};
  bv.amd_format = aql::kAmdFormatBarrierValue;
  bv.signal = reinterpret_cast<uint64_t>(&gate);
  bv.value = 3;
  bv.mask = 0xff;
  bv.cond = 0;  // EQ
  bv.completion_signal = reinterpret_cast<uint64_t>(&bv_done);
  std::memcpy(&q.slot(), &bv, sizeof bv);
  ++q.write_id();
  model.doorbell(getpid(), 0);
  run();
  EXPECT_EQ(ib_done.value, 0);
  EXPECT_EQ(bv_done.value, 1) << "(0x100 & 0xff) != 3";
  gate.value = 0x203;
  model.poll();  // the CP re-checks a waiting barrier's signal when it polls
  run();
  EXPECT_EQ(bv_done.value, 0);
  const auto st = model.queue_stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_TRUE(st[0].error.empty()) << st[0].error;
}

TEST_F(Cp, RingWrapsAround) {
  HostQueue q(0, 4);
  model.queue_created(q.view());
  const auto d = descriptor("k", 1000);
  Signal s;
  for (int round = 0; round < 5; ++round) {
    s.value = 3;
    for (int i = 0; i < 3; ++i) q.dispatch(d, 256, &s);
    model.doorbell(getpid(), 0);
    run();
    ASSERT_EQ(s.value, 0) << "round " << round;
  }
  EXPECT_EQ(q.read_id(), 15u);
}

TEST_F(Cp, SuspendThroughTheHwsHookStopsTheQueueUntilResume) {
  HostQueue q(0);
  model.queue_created(q.view());
  const auto d = descriptor("long", 2'000'000);
  Signal s;
  s.value = 1;
  q.dispatch(d, 256 * 640 * 3, &s);  // three rounds of 2 ms
  model.doorbell(getpid(), 0);
  model.advance_to(1'000'000);
  int done = 1;
  model.execute_runlist(kGpu, 0, {}, [&](int r) { done = r; });
  model.advance_to(20'000'000);
  EXPECT_EQ(done, 0);
  EXPECT_EQ(s.value, 1);  // suspended: no progress although 20 ms passed
  model.execute_runlist(kGpu, 0, {q.view()}, [&](int r) { done = r; });
  run();
  EXPECT_EQ(s.value, 0);
  const auto j = model.stats_json();
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["runlist"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["runlist"][0]["kind"], "suspend");
  EXPECT_EQ(j["gpus"][0]["runlist"][1]["kind"], "resume");
  EXPECT_GT(j["gpus"][0]["runlist"][0]["waves_saved"].get<uint64_t>(), 0u);
}

// A stats page holds at most max_records over all GPUs (one socket message whatever the GPU
// count); "more" marks each GPU that has records left, "last_seq" where its history ends.
TEST_F(Cp, StatsPagesShareOneRecordBudgetAcrossGpus) {
  constexpr uint32_t kOther = 0x3c4d;
  for (int i = 0; i < 3; ++i) {
    model.execute_runlist(kGpu, 0, {}, nullptr);
    model.execute_runlist(kOther, 0, {}, nullptr);
    run();
  }
  const auto all = model.stats_json();
  ASSERT_EQ(all["gpus"].size(), 2u);
  for (const auto& g : all["gpus"]) {
    EXPECT_EQ(g["runlist"].size(), 3u);
    EXPECT_FALSE(g["more"].get<bool>());
  }
  const auto page = model.stats_json(0, 4);
  std::size_t total = 0;
  bool more = false;
  for (std::size_t i = 0; i < page["gpus"].size(); ++i) {
    const auto& g = page["gpus"][i];
    total += g["runlist"].size();
    more |= g["more"].get<bool>();
    EXPECT_EQ(g["last_seq"], all["gpus"][i]["last_seq"]);
  }
  EXPECT_EQ(total, 4u);
  EXPECT_TRUE(more);
  // From a position: only later records, oldest first.
  const uint64_t mark = all["gpus"][0]["runlist"][0]["seq"].get<uint64_t>();
  const auto later = model.stats_json(mark, 100);
  EXPECT_EQ(later["gpus"][0]["runlist"].size(), 2u);
  EXPECT_EQ(later["gpus"][0]["runlist"][0]["seq"].get<uint64_t>(), mark + 1);
}

}  // namespace
}  // namespace gpreempt::sim::gpu
