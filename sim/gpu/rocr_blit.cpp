#include "sim/gpu/rocr_blit.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace gpreempt::sim::gpu {

namespace {

template <typename T>
T at(const uint8_t* bytes, std::size_t offset) {
  T v;
  std::memcpy(&v, bytes + offset, sizeof v);
  return v;
}

// amd_kernel_code_t (code object v2) offsets and bits, AMD's amd_kernel_code.h.
constexpr std::size_t kEntryOffset = 16;
constexpr std::size_t kRsrc1 = 48;
constexpr std::size_t kRsrc2 = 52;
constexpr std::size_t kCodeProperties = 56;
constexpr uint32_t kEnableSgprKernargSegmentPtr = 1u << 3;
constexpr int64_t kAmdKernelCodeTSize = 256;

enum class Blit { kCopyAligned, kCopyMisaligned, kFill };

// Where each kernel's arguments keep the work-item count (ROCr 5.2 BlitKernel::KernelArgs) and
// how many argument bytes it reads.
constexpr std::size_t kWorkitemsAt[] = {80, 48, 28};
constexpr std::size_t kArgBytes = 96;

std::optional<Blit> which(const uint8_t* kd) {
  for (std::size_t i = 0; i < kEntryOffset; ++i)
    if (kd[i] != 0) return std::nullopt;  // a v3 descriptor's segment sizes, or a versioned v2 one
  if (at<int64_t>(kd, kEntryOffset) != kAmdKernelCodeTSize) return std::nullopt;
  // Only the kernarg pointer as an SGPR input (the dispatch pointer, queue pointer and the
  // private segment buffer a compiler enables are absent).
  if (at<uint32_t>(kd, kCodeProperties) != kEnableSgprKernargSegmentPtr) return std::nullopt;
  const uint32_t rsrc2 = at<uint32_t>(kd, kRsrc2);
  if (((rsrc2 >> 1) & 0x1f) != 2) return std::nullopt;  // USER_SGPR_COUNT
  const uint32_t rsrc1 = at<uint32_t>(kd, kRsrc1);
  const uint32_t vgpr_granules = rsrc1 & 0x3f, sgpr_granules = (rsrc1 >> 6) & 0xf;
  // AssembleShader's granules: (count - 1) / 8 SGPRs, (count - 1) / 4 VGPRs.
  if (sgpr_granules == 3 && vgpr_granules == 2) return Blit::kCopyAligned;   // 32, 12
  if (sgpr_granules == 2 && vgpr_granules == 2) return Blit::kCopyMisaligned;  // 23, 10
  if (sgpr_granules == 2 && vgpr_granules == 1) return Blit::kFill;            // 19, 8
  return std::nullopt;
}

}  // namespace

std::optional<BlitEffect> rocr_blit_effect(const uint8_t (&kernel_descriptor)[64],
                                           const aql::KernelDispatchPacket& p,
                                           ProcessMemory& memory, int pid) {
  const auto kind = which(kernel_descriptor);
  if (!kind) return std::nullopt;
  // PopulateQueue: one dimension, workgroups of 64, the grid the work-item count.
  if ((p.setup & 3) != 1 || p.workgroup_size_x != 64 || p.grid_size_y != 1 || p.grid_size_z != 1)
    return std::nullopt;
  uint8_t args[kArgBytes];
  if (!p.kernarg_address || !memory.read(pid, p.kernarg_address, args, sizeof args))
    return std::nullopt;
  const uint32_t items = at<uint32_t>(args, kWorkitemsAt[static_cast<int>(*kind)]);
  if (items == 0 || (items + 63) / 64 * 64 != p.grid_size_x) return std::nullopt;
  BlitEffect e;
  switch (*kind) {
    case Blit::kCopyAligned:  // phase 1 source/destination start … phase 4 source end
    case Blit::kCopyMisaligned: {  // phase 1 start … phase 2 source end
      const uint64_t src = at<uint64_t>(args, 0), dst = at<uint64_t>(args, 8);
      const uint64_t src_end = at<uint64_t>(args, *kind == Blit::kCopyAligned ? 64 : 32);
      if (src_end < src) return std::nullopt;
      e.kind = BlitEffect::Kind::kCopy;
      e.src = src;
      e.dst = dst;
      e.bytes = src_end - src;
      break;
    }
    case Blit::kFill: {  // phase 1 destination start, phase 2 start, phase 2 end, the value
      const uint64_t dst = at<uint64_t>(args, 0), end = at<uint64_t>(args, 16);
      if (end < dst) return std::nullopt;
      e.kind = BlitEffect::Kind::kFill;
      e.dst = dst;
      e.bytes = end - dst;
      e.value = at<uint32_t>(args, 24);
      break;
    }
  }
  return e;
}

bool apply_blit(const BlitEffect& b, ProcessMemory& memory, int pid, std::string* why) {
  constexpr uint64_t kChunk = 1u << 20;
  std::vector<uint8_t> buf(static_cast<std::size_t>(std::min(b.bytes, kChunk)));
  if (b.kind == BlitEffect::Kind::kFill)
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(b.value >> (8 * (i % 4)));
  for (uint64_t done = 0; done < b.bytes;) {
    const std::size_t n = static_cast<std::size_t>(std::min(b.bytes - done, kChunk));
    if (b.kind == BlitEffect::Kind::kCopy && !memory.read(pid, b.src + done, buf.data(), n)) {
      *why = "blit copy: source " + std::to_string(b.src + done) + " is not mapped";
      return false;
    }
    if (!memory.write(pid, b.dst + done, buf.data(), n)) {
      *why = "blit: destination " + std::to_string(b.dst + done) + " is not mapped";
      return false;
    }
    done += n;
  }
  return true;
}

}  // namespace gpreempt::sim::gpu
