// Reading the KFD topology the way a runtime does (sysfs text), kept apart from the parsing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace simrt::topology {

// "key value\n" lines of a node's `properties` file; malformed lines are skipped.
std::map<std::string, uint64_t> parse_properties(std::string_view text);

struct GpuNode {
  uint32_t node = 0;
  uint32_t gpu_id = 0;
  std::map<std::string, uint64_t> properties;
};

// The GPU node with `gpu_id`, or the first GPU node when gpu_id is 0, under
// /sys/class/kfd/kfd/topology/nodes (redirected by the shim under kfdsim).
std::optional<GpuNode> find_gpu(uint32_t gpu_id, std::string* error);

}  // namespace simrt::topology
