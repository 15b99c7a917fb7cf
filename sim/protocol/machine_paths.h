// Where a simulated machine lives on the host, and which guest paths belong to it.
//
// A machine is a directory (KFDSIM_DIR): the daemon's socket, its start-up lock and log, and
// `root/`, where the daemon materialises the machine's sysfs/debugfs files so that the shim only
// has to redirect paths (stat, readdir, fopen, ifstream… then work with the real libc).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gpreempt::sim::protocol {

struct MachinePaths {
  std::string dir;     // KFDSIM_DIR
  std::string socket;  // KFDSIM_SOCKET, default <dir>/kfdsim.sock
  std::string lock() const { return dir + "/kfdsim.lock"; }
  std::string log() const { return dir + "/kfdsimd.log"; }
  std::string root() const { return dir + "/root"; }
};

// The file under `root` that stands for /dev/dri/renderD<minor>: kfdsimd creates it, the shim
// opens it for the render node, and kfdsimd knows a render-node descriptor by it (ACQUIRE_VM).
std::string render_node_placeholder(std::string_view root, std::uint32_t minor);

// Environment variables (read by the shim, the daemon and kfdsim alike).
inline constexpr const char* kEnvDir = "KFDSIM_DIR";
inline constexpr const char* kEnvSocket = "KFDSIM_SOCKET";
inline constexpr const char* kEnvDaemon = "KFDSIM_DAEMON";  // path of kfdsimd (default: beside the shim)
// "0": the shim never starts a daemon on demand (set by `kfdsim run` for its command's processes).
inline constexpr const char* kEnvAutostart = "KFDSIM_AUTOSTART";

// Pure: `getenv` is injected. Without KFDSIM_DIR the machine is the socket's directory when
// KFDSIM_SOCKET is set, else $XDG_RUNTIME_DIR/kfdsim (or /tmp/kfdsim-<uid>).
MachinePaths machine_paths(const std::function<const char*(const char*)>& getenv, unsigned uid);

// Lexical normalisation of an absolute path: collapses "//", "." and ".." (no symlinks followed,
// as the kernel would for these synthetic trees) and keeps one trailing slash (it makes the kernel
// follow a final symlink). Relative paths come back unchanged.
std::string normalize_path(std::string_view path);

// normalize_path without the trailing slash: for directory and socket names used as prefixes.
std::string normalize_dir(std::string_view path);

enum class GuestPathKind {
  kNone,     // not ours: pass through untouched
  kKfdNode,  // /dev/kfd itself (an ioctl device, not a file of root/)
  kFile,     // a sysfs/debugfs path served from root/
};

struct GuestPath {
  GuestPathKind kind = GuestPathKind::kNone;
  std::string host;  // for kFile: the path under root/ to use instead
};

// Classifies `path` (already normalised) and maps it under `root`:
// /sys/class/kfd…, /sys/devices/virtual/kfd…, /sys/kernel/debug/kfd…, /dev/kfd, and the loaded
// driver module as lsmod/libkmod see it (/proc/modules, /sys/module/amdgpu…).
GuestPath classify_path(std::string_view path, std::string_view root);

}  // namespace gpreempt::sim::protocol
