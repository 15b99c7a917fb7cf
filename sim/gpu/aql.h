// The AQL side of the simulated hardware, in the layouts the HSA runtime and the CP share:
// 64-byte packets in the ring buffer, ROCr's amd_queue_t dispatch ids, amd_signal_t values, and
// the descriptor a simulated kernel object points at (our convention, see docs/sim-model.md).
// Shared by the command processor (sim/gpu) and the user runtime (sim/runtime); no code, only
// layouts, so both sides agree byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpreempt::sim::aql {

inline constexpr std::size_t kPacketSize = 64;

// hsa_packet_type_t (HSA 1.2 §2.9.1), in header bits 0..7.
inline constexpr uint16_t kPacketTypeVendor = 0;
inline constexpr uint16_t kPacketTypeInvalid = 1;
inline constexpr uint16_t kPacketTypeKernelDispatch = 2;
inline constexpr uint16_t kPacketTypeBarrierAnd = 3;
inline constexpr uint16_t kPacketTypeAgentDispatch = 4;
inline constexpr uint16_t kPacketTypeBarrierOr = 5;
// hsa_packet_header_t bit positions.
inline constexpr uint16_t kHeaderType = 0;
inline constexpr uint16_t kHeaderBarrier = 8;
inline constexpr uint16_t kHeaderAcquireFenceScope = 9;
inline constexpr uint16_t kHeaderReleaseFenceScope = 11;
inline constexpr uint16_t kFenceScopeSystem = 2;

// hsa_kernel_dispatch_packet_t
struct KernelDispatchPacket {
  uint16_t header;
  uint16_t setup;  // dimensions in bits 0..1
  uint16_t workgroup_size_x;
  uint16_t workgroup_size_y;
  uint16_t workgroup_size_z;
  uint16_t reserved0;
  uint32_t grid_size_x;
  uint32_t grid_size_y;
  uint32_t grid_size_z;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  uint64_t kernel_object;
  uint64_t kernarg_address;
  uint64_t reserved2;
  uint64_t completion_signal;
};
static_assert(sizeof(KernelDispatchPacket) == kPacketSize);
static_assert(offsetof(KernelDispatchPacket, kernel_object) == 32);
static_assert(offsetof(KernelDispatchPacket, completion_signal) == 56);

// hsa_barrier_and_packet_t
struct BarrierAndPacket {
  uint16_t header;
  uint16_t reserved0;
  uint32_t reserved1;
  uint64_t dep_signal[5];
  uint64_t reserved2;
  uint64_t completion_signal;
};
static_assert(sizeof(BarrierAndPacket) == kPacketSize);
static_assert(offsetof(BarrierAndPacket, dep_signal) == 8);

// ROCr's AMD vendor packet (type 0, AmdFormat 2 in byte 2): a barrier that waits until
// (signal value & mask) meets `cond` against `value` (hsa_amd_barrier_value_packet_t).
inline constexpr uint8_t kAmdFormatBarrierValue = 2;
// AmdFormat 1: a PM4 indirect buffer (amd_aql_pm4_ib_packet_t) ROCr runs for cache maintenance
// (hsa_executable_freeze invalidates the code caches); its completion signal is at 56 too.
inline constexpr uint8_t kAmdFormatPm4Ib = 1;
struct AmdBarrierValuePacket {
  uint16_t header;
  uint8_t amd_format;
  uint8_t reserved;
  uint32_t reserved0;
  uint64_t signal;
  int64_t value;
  int64_t mask;
  uint32_t cond;  // hsa_signal_condition_t: 0 EQ, 1 NE, 2 LT, 3 GTE
  uint32_t reserved1;
  uint64_t reserved2;
  uint64_t reserved3;
  uint64_t completion_signal;
};
static_assert(sizeof(AmdBarrierValuePacket) == kPacketSize);
static_assert(offsetof(AmdBarrierValuePacket, completion_signal) == 56);

// ROCr amd_queue_t offsets the CP uses: KFD's write/read pointer addresses point here
// (docs/kfd-interface.md#joining-queues-across-sources).
inline constexpr uint64_t kAmdQueueWriteDispatchId = 0x38;
inline constexpr uint64_t kAmdQueueReadDispatchId = 0x80;
inline constexpr std::size_t kAmdQueueSize = 256;

// amd_signal_t: an hsa_signal_t handle is the address of one of these.
inline constexpr uint64_t kSignalKind = 0;
inline constexpr uint64_t kSignalValue = 8;
// ROCr's interrupt signals: where the CP writes the signal's event id after updating the value,
// and the id (then it interrupts; KFD sets the event).
inline constexpr uint64_t kSignalEventMailbox = 16;
inline constexpr uint64_t kSignalEventId = 24;
// A packet's start and end, in ticks of the GPU's timestamp counter (the one GET_CLOCK_COUNTERS
// reads; 100 MHz on GFX9): ns = ticks * kGpuTimestampPeriodNs.
inline constexpr uint64_t kSignalStartTs = 32;
inline constexpr uint64_t kSignalEndTs = 40;
inline constexpr uint64_t kGpuTimestampPeriodNs = 10;
inline constexpr std::size_t kSignalSize = 64;
inline constexpr int64_t kSignalKindUser = 1;

// The simulator's completion bell (our convention, like the kernel descriptor): a 32-bit counter
// in the last 64-bit slot of a process's doorbell frame (2 pages, 1024 doorbells; the KFD gives a
// compute queue the doorbell of its queue id, so this one is free unless a process has 1024
// queues). After writing completion signals of a process the model increments it and wakes its
// futex; the doorbell frame is memory both sides map, so simrt's waits sleep on it instead of
// napping. A real GPU raises an interrupt that wakes the KFD's event waiters instead.
inline constexpr uint32_t kCompletionBellDoorbell = 1023;
inline constexpr std::size_t kCompletionBellOffset = std::size_t{kCompletionBellDoorbell} * 8;

// What `kernel_object` of a simulated dispatch points at: 64 bytes (the size of a real AMD kernel
// descriptor) naming the kernel, its modelled cost and its kind: the CP takes the kernel's
// registers and LDS from the register model of that kind (sim/gpu/cwsr_model.h), as a real CP
// takes them from the descriptor's compute_pgm_rsrc1.
inline constexpr uint64_t kKernelDescriptorMagic = 0x314b4d4953525047ull;  // "GPRSIMK1"
inline constexpr std::size_t kKernelNameMax = 40;
struct KernelDescriptor {
  uint64_t magic;
  uint64_t wg_cost_ns;  // how long one workgroup holds its CU slot
  uint8_t kind;  // sim::gpu::KernelKind: 0 generic, 1 matrix (GEMM/conv), 2 vector
  uint8_t reserved[7];
  char name[kKernelNameMax];  // NUL-terminated
};
static_assert(sizeof(KernelDescriptor) == 64);

// A real AMDHSA kernel descriptor (code object v3+, LLVM AMDGPUUsage "Kernel Descriptor"): 64
// bytes whose kernel_code_entry_byte_offset (i64 at 16) points at the code and whose
// compute_pgm_rsrc1 (u32 at 48) is never 0 for a compiled kernel (it holds the register counts).
inline bool is_amdhsa_kernel_descriptor(const void* bytes64) {
  int64_t entry = 0;
  uint32_t rsrc1 = 0;
  std::memcpy(&entry, static_cast<const uint8_t*>(bytes64) + 16, sizeof entry);
  std::memcpy(&rsrc1, static_cast<const uint8_t*>(bytes64) + 48, sizeof rsrc1);
  return entry != 0 && rsrc1 != 0;
}

}  // namespace gpreempt::sim::aql
