// ROCr's blit kernels (5.2 to 6.1.2 build them alike), whose effect the simulated CP carries out
// although it runs no ISA.
//
// ROCr copies with kernels of its own when it does not use an SDMA engine: every
// GpuAgent::DmaCopy (the code-object loader's hsa_executable_freeze copies each kernel's code and
// descriptor into VRAM with it, ROCr 5.2 src/core/runtime/amd_loader_context.cpp
// RegionMemory::Freeze) and, with HSA_ENABLE_SDMA=0, hsa_amd_memory_async_copy and
// hsa_amd_memory_fill. Without the copy the loaded kernel descriptors stay zero and the first
// dispatch of a loaded kernel stops its queue; with it, HIP programs run. The kernels are
// recognised by what ROCr builds for them (src/core/runtime/amd_gpu_agent.cpp AssembleShader): a
// code-object-v2 header (amd_kernel_code_t) whose version fields ROCr leaves zero, the machine
// code right behind it (entry offset 256), the kernarg pointer as the only enabled SGPR input,
// two user SGPRs, and the register granules of the kernel (copy aligned: 32 SGPRs, 12 VGPRs;
// copy misaligned: 23 and 10; fill: 19 and 8); then the dispatch must be the one-dimensional
// 64-wide grid whose work-item count is the one in the kernel's arguments
// (src/core/runtime/amd_blit_kernel.cpp SubmitLinearCopyCommand, SubmitLinearFillCommand). A
// compiled (code object v3+) kernel never matches: its descriptor's first bytes are its segment
// sizes and its code is not at offset 256 with zero kernarg size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/gpu/aql.h"
#include "sim/gpu/process_memory.h"

namespace gpreempt::sim::gpu {

struct BlitEffect {
  enum class Kind : uint8_t { kCopy, kFill };
  Kind kind = Kind::kCopy;
  uint64_t dst = 0;
  uint64_t src = 0;    // kCopy
  uint64_t bytes = 0;
  uint32_t value = 0;  // kFill: the dword written
};

// The blit a dispatch of `kernel_descriptor` (its 64 bytes) with these kernel arguments performs,
// if it is one of ROCr's; nullopt for any other kernel (or unreadable arguments).
std::optional<BlitEffect> rocr_blit_effect(const uint8_t (&kernel_descriptor)[64],
                                           const aql::KernelDispatchPacket& packet,
                                           ProcessMemory& memory, int pid);

// Carries the blit out in the process's memory; false with `why` set when an address is not
// mapped (a GPU would fault).
bool apply_blit(const BlitEffect& blit, ProcessMemory& memory, int pid, std::string* why);

}  // namespace gpreempt::sim::gpu
