// Topology capability bits (kfd_topology.h HSA_CAP_*, the same layout as hsakmt's
// HSA_CAPABILITY bitfield) that the simulated device advertises and checks.
#pragma once

#include <cstdint>

#include "device_profile.h"

namespace gpreempt::sim::caps {

inline constexpr uint32_t HSA_CAP_WATCH_POINTS_SUPPORTED = 0x00000080;
inline constexpr uint32_t HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT = 8;  // log2(#watch points)
inline constexpr uint32_t HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT = 12;
inline constexpr uint32_t HSA_CAP_DOORBELL_TYPE_2_0 = 0x2;
inline constexpr uint32_t HSA_CAP_AQL_QUEUE_DOUBLE_MAP = 0x00004000;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_SUPPORT = 0x00008000;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED = 0x00010000;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED = 0x00020000;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED = 0x00040000;
inline constexpr uint32_t HSA_CAP_MEM_EDCSUPPORTED = 0x00100000;
inline constexpr uint32_t HSA_CAP_RASEVENTNOTIFY = 0x00200000;
inline constexpr uint32_t HSA_CAP_ASIC_REVISION_SHIFT = 22;
inline constexpr uint32_t HSA_CAP_SRAM_EDCSUPPORTED = 0x04000000;
inline constexpr uint32_t HSA_CAP_SVMAPI_SUPPORTED = 0x08000000;
inline constexpr uint32_t HSA_CAP_FLAGS_COHERENTHOSTACCESS = 0x10000000;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED = 0x20000000;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED = 0x40000000;
inline constexpr uint32_t HSA_CAP_PER_QUEUE_RESET_SUPPORTED = 0x80000000;
// capability2: only GFX 12.1 advertises LDS out-of-range trapping, so no profile sets it.
inline constexpr uint32_t HSA_CAP2_TRAP_DEBUG_LDS_OUT_OF_ADDR_RANGE_SUPPORTED = 0x00000001;

// debug_prop (kfd_topology.h HSA_DBG_*): address-watch mask bit range and dispatch-info validity.
inline constexpr uint32_t HSA_DBG_WATCH_ADDR_MASK_HI_BIT_SHIFT = 4;
inline constexpr uint32_t HSA_DBG_DISPATCH_INFO_ALWAYS_VALID = 0x00000400;
// GFX 9.4.3 widens the watch mask range by one bit on both ends (LO 6->7, HI 29->30).
constexpr uint32_t gfx9_debug_prop(bool gfx943) {
  const uint32_t lo = gfx943 ? 7 : 6, hi = gfx943 ? 30 : 29;
  // TTMPs are always set up from GFX 9.4.2 on, so dispatch info is always valid.
  return lo | (hi << HSA_DBG_WATCH_ADDR_MASK_HI_BIT_SHIFT) | HSA_DBG_DISPATCH_INFO_ALWAYS_VALID;
}

// SPI trap-mask bits a GFX 9.4.2/9.4.3 debugger may override (FP, integer divide, address
// watch, memory violation = KFD_DBG_TRAP_MASK_* bits 0..8).
inline uint32_t wave_launch_trap_override_supported(const DeviceProfile&) {
  return 0x1ff;
}

}  // namespace gpreempt::sim::caps
