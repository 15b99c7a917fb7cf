// GPUs as the KFD topology describes them (docs/kfd-interface.md#topology): enough to report them
// in `gpreempt info`, to tell whether debug trap is supported, and to convert a grace period from
// microseconds. The reading side; each node's `properties` text is decoded by decode_properties
// (properties.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpreempt::discovery {

inline constexpr const char* kTopologyRoot = "/sys/class/kfd/kfd/topology";
// HSA_CAPABILITY bits (libhsakmt hsakmttypes.h bitfield order).
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_SUPPORT = 1u << 15;
inline constexpr uint32_t HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED = 1u << 29;

struct GpuNode {
  unsigned node = 0;  // nodes/<N>
  uint32_t gpu_id = 0;
  std::string name;
  uint32_t gfx_target_version = 0;  // major*10000 + minor*100 + stepping
  uint32_t simd_count = 0;
  uint32_t num_xcc = 1;
  uint32_t max_engine_clk_fcompute = 0;  // MHz
  uint32_t capability = 0;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  bool debug_trap_supported() const { return (capability & HSA_CAP_TRAP_DEBUG_SUPPORT) != 0; }
  // "gfx942" (gfx_target_name); "unknown" when the version does not encode a target.
  std::string gfx_name() const;
};

// Every GPU node (gpu_id != 0) under `root`, in node order. Throws gpreempt::Error when the
// topology cannot be listed, and Error(EINVAL) naming the file and line when a GPU node's
// `properties` is malformed.
std::vector<GpuNode> read_gpu_nodes(const std::string& root = kTopologyRoot);
std::optional<GpuNode> find_gpu(const std::vector<GpuNode>& nodes, uint32_t gpu_id);

}  // namespace gpreempt::discovery
