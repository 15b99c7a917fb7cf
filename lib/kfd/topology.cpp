#include "kfd/topology.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>

#include "common/error.h"
#include "common/text_file.h"

namespace gpreempt::kfd {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}
std::optional<uint64_t> to_u64(std::string_view s) {
  s = trim(s);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}
}  // namespace

std::string GpuNode::gfx_name() const {
  unsigned major = gfx_target_version / 10000, minor = (gfx_target_version / 100) % 100,
           step = gfx_target_version % 100;
  char buf[32];
  std::snprintf(buf, sizeof buf, "gfx%u%x%x", major, minor, step);
  return buf;
}

std::map<std::string, uint64_t> parse_properties(std::string_view text) {
  std::map<std::string, uint64_t> out;
  unsigned line_no = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    auto sp = line.find(' ');
    auto value = sp == std::string_view::npos ? std::nullopt : to_u64(line.substr(sp + 1));
    if (!value)
      throw Error(EINVAL, "properties line " + std::to_string(line_no) + ": expected \"<key> "
                          "<unsigned>\", got \"" + std::string(line) + "\"");
    out[std::string(line.substr(0, sp))] = *value;
  }
  return out;
}

std::vector<GpuNode> read_gpu_nodes(const std::string& root) {
  auto names = list_directory(root + "/nodes");
  if (!names) {
    int e = errno;
    throw Error(e, "cannot list " + root + "/nodes: " + errno_text(e));
  }
  std::vector<std::pair<unsigned, std::string>> nodes;
  for (const auto& n : *names)
    if (auto v = to_u64(n)) nodes.emplace_back(static_cast<unsigned>(*v), n);
  std::sort(nodes.begin(), nodes.end());
  std::vector<GpuNode> out;
  for (const auto& [index, name] : nodes) {
    const std::string dir = root + "/nodes/" + name;
    auto gpu_id_text = read_text_file(dir + "/gpu_id");
    if (!gpu_id_text) continue;  // a cgroup may hide some nodes (reads fail with EPERM)
    auto gpu_id = to_u64(*gpu_id_text);
    if (!gpu_id || *gpu_id == 0) continue;  // CPU node
    GpuNode g;
    g.node = index;
    g.gpu_id = static_cast<uint32_t>(*gpu_id);
    if (auto nm = read_text_file(dir + "/name")) g.name = std::string(trim(*nm));
    if (auto props_text = read_text_file(dir + "/properties")) {
      std::map<std::string, uint64_t> p;
      try {
        p = parse_properties(*props_text);
      } catch (const Error& e) {
        throw Error(e.code(), dir + "/properties: " + e.what());
      }
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

}  // namespace gpreempt::kfd
