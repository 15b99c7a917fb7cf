// An SDMA engine's packet processor: the SDMA 4.x packets ROCr's BlitSdma writes on gfx9 (ROCr
// src/core/inc/sdma_registers.h; the same layouts as amdgpu's sdma_v4 headers). ROCr gives
// host<->device copies to SDMA queues unless HSA_ENABLE_SDMA=0, and waits on the completion its
// packets write, so without an engine the first hipMemcpy never returns.
//
// The ring is bytes; the write pointer (CREATE_QUEUE's write_pointer_address) and the read
// pointer the engine writes back are 64-bit byte offsets that only grow (gfx9's monotonic ring
// indices), the ring offset being their remainder by the ring size. Packets run when the GPU
// model polls (every CP poll period); a copy takes no modelled time. What the engine does not
// know stops the queue with the reason.
#pragma once

#include <cstdint>
#include <string>

#include "sim/device/kfd_device.h"
#include "sim/gpu/process_memory.h"

namespace gpreempt::sim::gpu {

// SDMA opcodes and sub-opcodes (header bits 0-7 and 8-15).
namespace sdma {
inline constexpr uint32_t kOpNop = 0;
inline constexpr uint32_t kOpCopy = 1;
inline constexpr uint32_t kOpFence = 5;
inline constexpr uint32_t kOpTrap = 6;
inline constexpr uint32_t kOpPollRegMem = 8;
inline constexpr uint32_t kOpAtomic = 10;
inline constexpr uint32_t kOpConstFill = 11;
inline constexpr uint32_t kOpTimestamp = 13;
inline constexpr uint32_t kSubOpCopyLinear = 0;
inline constexpr uint32_t kSubOpTimestampGetGlobal = 2;
inline constexpr uint32_t kAtomicAdd64 = 47;
}  // namespace sdma

class SdmaQueue {
 public:
  explicit SdmaQueue(const QueueView& view);

  struct Progress {
    bool wrote_memory = false;  // a fence, atomic or timestamp landed (a signal may have changed)
    bool interrupted = false;   // a TRAP packet: the KFD takes an interrupt for the process
  };
  // Runs the packets from the read pointer up to the runtime's write pointer, writing the read
  // pointer back as it goes; stops at a memory poll whose condition does not hold yet (retried at
  // the next call), or for good at a packet it cannot run. `gpu_clock` is what a TIMESTAMP packet
  // writes (the GPU's timestamp counter).
  Progress run(ProcessMemory& memory, uint64_t gpu_clock);

  const QueueView& view() const { return view_; }
  uint64_t read_bytes() const { return read_; }
  uint64_t packets() const { return packets_; }
  const std::string& error() const { return error_; }

 private:
  bool read_ring(ProcessMemory& memory, uint64_t offset, void* dst, std::size_t len);

  QueueView view_;
  uint64_t read_ = 0;     // byte offset of the next packet (monotonic)
  uint64_t packets_ = 0;  // packets completed
  std::string error_;
};

}  // namespace gpreempt::sim::gpu
