#include "sim/protocol/machine_paths.h"

#include <vector>

namespace gpreempt::sim::protocol {

std::string normalize_dir(std::string_view path) {
  std::string p = normalize_path(path);
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

MachinePaths machine_paths(const std::function<const char*(const char*)>& getenv, unsigned uid) {
  MachinePaths p;
  const char* dir = getenv(kEnvDir);
  const char* sock = getenv(kEnvSocket);
  if (dir && *dir) {
    p.dir = normalize_dir(dir);
  } else if (sock && *sock) {
    std::string s = normalize_dir(sock);
    auto slash = s.rfind('/');
    p.dir = slash == std::string::npos || slash == 0 ? std::string("/") : s.substr(0, slash);
  } else {
    const char* xdg = getenv("XDG_RUNTIME_DIR");
    p.dir = (xdg && *xdg) ? normalize_dir(std::string(xdg) + "/kfdsim")
                          : "/tmp/kfdsim-" + std::to_string(uid);
  }
  p.socket = (sock && *sock) ? normalize_dir(sock) : p.dir + "/kfdsim.sock";
  return p;
}

std::string normalize_path(std::string_view path) {
  if (path.empty() || path[0] != '/') return std::string(path);
  std::vector<std::string_view> parts;
  // A final "/", "/." or "/.." makes the kernel resolve the last component as a directory
  // (following a symlink there): the result keeps a trailing slash to preserve that.
  bool trailing = path.back() == '/';
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    std::string_view part = path.substr(i, j - i);
    if (!part.empty()) trailing = j == path.size() ? (part == "." || part == "..") : trailing;
    if (part.empty() || part == ".") {
    } else if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else {
      parts.push_back(part);
    }
    i = j;
  }
  std::string out;
  for (auto p : parts) {
    out += '/';
    out += p;
  }
  if (out.empty()) return "/";
  if (trailing) out += '/';
  return out;
}

namespace {

// `path` is `prefix` itself or lies below it.
bool under(std::string_view path, std::string_view prefix) {
  return path.substr(0, prefix.size()) == prefix &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace

GuestPath classify_path(std::string_view path, std::string_view root) {
  static constexpr std::string_view kTrees[] = {"/sys/class/kfd", "/sys/devices/virtual/kfd",
                                                "/sys/kernel/debug/kfd"};
  GuestPath g;
  if (path == "/dev/kfd") {
    g.kind = GuestPathKind::kKfdNode;
    g.host = std::string(root) + "/dev/kfd";
    return g;
  }
  // The amdgpu module's presence (lsmod reads /proc/modules, libkmod /sys/module/<name>/): a
  // machine with a simulated KFD has the driver loaded.
  // The DRM class (rocm-smi walks /sys/class/drm/card*): the simulated GPUs are the machine's.
  const bool module_file = path == "/proc/modules" || under(path, "/sys/module/amdgpu") ||
                           under(path, "/sys/class/drm");
  if (module_file) {
    g.kind = GuestPathKind::kFile;
    g.host = std::string(root);
    g.host += path;
    return g;
  }
  for (auto tree : kTrees) {
    if (under(path, tree)) {
      g.kind = GuestPathKind::kFile;
      g.host = std::string(root);
      g.host += path;
      return g;
    }
  }
  return g;
}

std::string render_node_placeholder(std::string_view root, std::uint32_t minor) {
  return std::string(root) + "/dev/dri/renderD" + std::to_string(minor);
}

}  // namespace gpreempt::sim::protocol
