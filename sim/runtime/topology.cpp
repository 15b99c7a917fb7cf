#include "topology.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace simrt::topology {

std::map<std::string, uint64_t> parse_properties(std::string_view text) {
  std::map<std::string, uint64_t> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const auto sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0) continue;
    uint64_t v = 0;
    const std::string_view num = line.substr(sp + 1);
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size()) continue;
    out.emplace(std::string(line.substr(0, sp)), v);
  }
  return out;
}

static std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<GpuNode> find_gpu(uint32_t gpu_id, std::string* error) {
  const std::string base = "/sys/class/kfd/kfd/topology/nodes/";
  for (uint32_t n = 0; n < 256; ++n) {
    const std::string dir = base + std::to_string(n);
    auto id_text = slurp(dir + "/gpu_id");
    if (!id_text) break;  // nodes are numbered densely
    uint32_t id = 0;
    std::from_chars(id_text->data(), id_text->data() + id_text->size(), id);
    if (id == 0 || (gpu_id != 0 && id != gpu_id)) continue;
    GpuNode g;
    g.node = n;
    g.gpu_id = id;
    if (auto props = slurp(dir + "/properties")) g.properties = parse_properties(*props);
    return g;
  }
  if (error) {
    *error = gpu_id ? "no GPU node with gpu_id " + std::to_string(gpu_id) + " under " + base
                    : "no GPU node under " + base + " (is this running under kfdsim run?)";
  }
  return std::nullopt;
}

}  // namespace simrt::topology
