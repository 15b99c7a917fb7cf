#include "discovery/topology.h"

#include <algorithm>
#include <cerrno>

#include "common/error.h"
#include "common/text_file.h"
#include "discovery/proc_parse.h"
#include "discovery/properties.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

std::string GpuNode::gfx_name() const {
  return gfx_target_name(gfx_target_version).value_or("unknown");
}

std::vector<GpuNode> read_gpu_nodes(const std::string& root) {
  auto names = list_directory(root + "/nodes");
  if (!names) {
    int e = errno;
    throw Error(e, "cannot list " + root + "/nodes: " + errno_text(e));
  }
  std::vector<std::pair<unsigned, std::string>> nodes;
  for (const auto& n : *names)
    if (auto v = parse_sysfs_number(n)) nodes.emplace_back(static_cast<unsigned>(*v), n);
  std::sort(nodes.begin(), nodes.end());
  std::vector<GpuNode> out;
  for (const auto& [index, name] : nodes) {
    const std::string dir = root + "/nodes/" + name;
    auto gpu_id_text = read_text_file(dir + "/gpu_id");
    if (!gpu_id_text) continue;  // a cgroup may hide some nodes (reads fail with EPERM)
    auto gpu_id = parse_sysfs_number(*gpu_id_text);
    if (!gpu_id || *gpu_id == 0) continue;  // CPU node
    GpuNode g;
    g.node = index;
    g.gpu_id = static_cast<uint32_t>(*gpu_id);
    if (auto nm = read_text_file(dir + "/name")) g.name = std::string(detail::trim(*nm));
    if (auto props_text = read_text_file(dir + "/properties")) {
      const auto decoded = decode_properties(*props_text, dir + "/properties");
      if (!decoded.complete) {
        std::string why;
        for (const auto& d : decoded.diagnostics) why += (why.empty() ? "" : "; ") + d.to_string();
        throw Error(EINVAL, why);
      }
      const auto& p = decoded.properties;
      auto get = [&](const char* k, uint64_t dflt = 0) {
        auto it = p.find(k);
        return static_cast<uint32_t>(it == p.end() ? dflt : it->second);
      };
      g.gfx_target_version = get("gfx_target_version");
      g.simd_count = get("simd_count");
      g.num_xcc = get("num_xcc", 1);
      g.max_engine_clk_fcompute = get("max_engine_clk_fcompute");
      g.capability = get("capability");
      g.vendor_id = get("vendor_id");
      g.device_id = get("device_id");
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<GpuNode> find_gpu(const std::vector<GpuNode>& nodes, uint32_t gpu_id) {
  for (const auto& n : nodes)
    if (n.gpu_id == gpu_id) return n;
  return std::nullopt;
}

}  // namespace gpreempt::discovery
