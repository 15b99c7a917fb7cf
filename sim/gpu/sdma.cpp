#include "sim/gpu/sdma.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace gpreempt::sim::gpu {

namespace {

uint64_t addr(const uint32_t* dw, int lo) { return dw[lo] | (uint64_t{dw[lo + 1]} << 32); }

// POLL_REGMEM's compare functions (as PM4's WAIT_REG_MEM).
bool compare(uint32_t func, uint32_t value, uint32_t reference) {
  switch (func) {
    case 0: return true;
    case 1: return value < reference;
    case 2: return value <= reference;
    case 3: return value == reference;
    case 4: return value != reference;
    case 5: return value >= reference;
    case 6: return value > reference;
    default: return false;
  }
}

// Dwords of the packet whose header is `h`; 0 for a packet this engine does not run.
uint32_t packet_dwords(uint32_t h) {
  const uint32_t op = h & 0xff, sub_op = (h >> 8) & 0xff;
  switch (op) {
    case sdma::kOpNop: return 1 + ((h >> 16) & 0x3fff);
    case sdma::kOpCopy: return sub_op == sdma::kSubOpCopyLinear ? 7 : 0;
    case sdma::kOpFence: return 4;
    case sdma::kOpTrap: return 2;
    case sdma::kOpPollRegMem: return 6;
    case sdma::kOpAtomic: return 8;
    case sdma::kOpConstFill: return 5;
    case sdma::kOpTimestamp: return sub_op == sdma::kSubOpTimestampGetGlobal ? 3 : 0;
    default: return 0;
  }
}

// Byte counts are bytes - 1 on gfx9. COPY_LINEAR's field is 22 bits, 30 where the engine takes
// larger copies (ROCr 6.1's count_ext, gfx94x); ROCr leaves the bits above 22 zero otherwise, so
// reading 30 serves both. CONSTANT_FILL's stays 22.
constexpr uint32_t kCopyCountMask = (1u << 30) - 1;
constexpr uint32_t kFillCountMask = (1u << 22) - 1;

bool copy(ProcessMemory& m, int pid, uint64_t dst, uint64_t src, uint64_t bytes) {
  std::vector<uint8_t> buf(static_cast<std::size_t>(bytes));
  return m.read(pid, src, buf.data(), buf.size()) && m.write(pid, dst, buf.data(), buf.size());
}

}  // namespace

SdmaQueue::SdmaQueue(const QueueView& view) : view_(view) {
  if (view_.ring_size == 0 || view_.ring_size % 4 != 0) error_ = "SDMA ring size is not whole dwords";
}

bool SdmaQueue::read_ring(ProcessMemory& memory, uint64_t offset, void* dst, std::size_t len) {
  // A packet may run past the ring's end and continue at its start.
  const uint64_t at = offset % view_.ring_size;
  const std::size_t first = static_cast<std::size_t>(std::min<uint64_t>(len, view_.ring_size - at));
  auto* out = static_cast<uint8_t*>(dst);
  return memory.read(view_.pid, view_.ring_base + at, out, first) &&
         (first == len || memory.read(view_.pid, view_.ring_base, out + first, len - first));
}

SdmaQueue::Progress SdmaQueue::run(ProcessMemory& memory, uint64_t gpu_clock) {
  Progress progress;
  if (!error_.empty()) return progress;
  const int pid = view_.pid;
  uint64_t write = 0;
  if (!memory.read(pid, view_.write_pointer_address, &write, sizeof write)) {
    error_ = "cannot read the SDMA write pointer";
    return progress;
  }
  auto fail = [&](const std::string& why) {
    error_ = "SDMA packet at byte " + std::to_string(read_) + ": " + why;
    return progress;
  };
  while (read_ < write) {
    uint32_t h = 0;
    if (!read_ring(memory, read_, &h, sizeof h)) return fail("the ring is not readable");
    const uint32_t n = packet_dwords(h);
    if (n == 0)
      return fail("op " + std::to_string(h & 0xff) + " sub-op " + std::to_string((h >> 8) & 0xff) +
                  " is not one the engine runs");
    if (read_ + n * 4ull > write) return progress;  // not all written yet
    uint32_t dw[8] = {};
    if (!read_ring(memory, read_, dw, n * 4ull)) return fail("the ring is not readable");
    const uint32_t op = h & 0xff;
    if (op == sdma::kOpCopy) {
      const uint64_t bytes = uint64_t{dw[1] & kCopyCountMask} + 1;
      if (!copy(memory, pid, addr(dw, 5), addr(dw, 3), bytes)) return fail("copy to or from an unmapped address");
    } else if (op == sdma::kOpConstFill) {
      const uint64_t bytes = uint64_t{dw[4] & kFillCountMask} + 1;
      std::vector<uint8_t> buf(static_cast<std::size_t>(bytes));
      for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(dw[3] >> (8 * (i % 4)));
      if (!memory.write(pid, addr(dw, 1), buf.data(), buf.size())) return fail("fill of an unmapped address");
    } else if (op == sdma::kOpFence) {
      if (!memory.write(pid, addr(dw, 1), &dw[3], sizeof dw[3])) return fail("fence to an unmapped address");
      progress.wrote_memory = true;
    } else if (op == sdma::kOpTrap) {
      progress.interrupted = true;
    } else if (op == sdma::kOpPollRegMem) {
      // A register poll (mem_poll 0) is the HDP flush ROCr asks for: no host data path to flush.
      if (h >> 31) {
        uint32_t value = 0;
        if (!memory.read(pid, addr(dw, 1), &value, sizeof value)) return fail("poll of an unmapped address");
        if (!compare((h >> 28) & 7, value & dw[4], dw[3])) return progress;  // retried next time
      }
    } else if (op == sdma::kOpAtomic) {
      const uint32_t operation = h >> 25;
      if (operation != sdma::kAtomicAdd64) return fail("atomic operation " + std::to_string(operation));
      int64_t value = 0;
      const uint64_t a = addr(dw, 1);
      if (!memory.read(pid, a, &value, sizeof value)) return fail("atomic on an unmapped address");
      value += static_cast<int64_t>(addr(dw, 3));
      if (!memory.write(pid, a, &value, sizeof value)) return fail("atomic on an unmapped address");
      progress.wrote_memory = true;
    } else if (op == sdma::kOpTimestamp) {
      if (!memory.write(pid, addr(dw, 1), &gpu_clock, sizeof gpu_clock)) return fail("timestamp to an unmapped address");
      progress.wrote_memory = true;
    }
    read_ += n * 4ull;
    ++packets_;
    if (!memory.write(pid, view_.read_pointer_address, &read_, sizeof read_))
      return fail("cannot write the read pointer back");
  }
  return progress;
}

}  // namespace gpreempt::sim::gpu
