// Redirecting the KFD's sysfs/debugfs paths (and a simulated render node's sysfs) into the machine's
// materialised files, after kfdsimd has re-rendered what the lookup can reach.
#include "sim/shim/guest_paths.h"

#include <string.h>

#include <cstdint>
#include <vector>

#include "sim/shim/daemon_client.h"
#include "sim/shim/drm_render.h"

namespace gpreempt::sim::shim {

using protocol::GuestPathKind;
using protocol::Op;

namespace {

// Cheap pre-filter: only absolute paths naming "kfd" (or the driver module's files) can be ours.
bool maybe_ours(const char* path) {
  return path && path[0] == '/' &&
         (strstr(path, "kfd") || strstr(path, "/proc/modules") || strstr(path, "/sys/module/amdgpu") ||
          strstr(path, "/sys/class/drm"));
}

protocol::GuestPath classify(const char* path) {
  if (!maybe_ours(path)) return {};
  // Host paths are relative for now: the root is the one the daemon announces (see files_root).
  return protocol::classify_path(protocol::normalize_path(path), "");
}

// The daemon rewrites the materialised files a lookup of `guest_path` (normalised) can reach from
// the device's current state.
void refresh_files(const std::string& guest_path) {
  (void)call(Op::kRefreshFiles, 0, std::vector<uint8_t>(guest_path.begin(), guest_path.end()));
}

// /sys/dev/char/226:<minor>… of a simulated render node lives in the machine's files too.
bool is_simulated_drm_sysfs(const char* path) {
  static constexpr char kPrefix[] = "/sys/dev/char/226:";
  if (!path || strncmp(path, kPrefix, sizeof kPrefix - 1) != 0) return false;
  const char* p = path + sizeof kPrefix - 1;
  int minor = 0;
  if (*p < '0' || *p > '9') return false;
  while (*p >= '0' && *p <= '9' && minor < 100000) minor = minor * 10 + (*p++ - '0');
  return (*p == '\0' || *p == '/') && drm_node_exists(minor);
}

}  // namespace

// Where the files are: the directory the machine's daemon announced, or (daemon unreachable) the
// one the environment names, where nothing will be found.
const std::string& files_root() {
  const std::string& announced = machine_root();
  return announced.empty() ? configured_root() : announced;
}

Resolved resolve(const char* path) {
  if (is_simulated_drm_sysfs(path)) {
    const std::string guest = protocol::normalize_path(path);
    refresh_files(guest);
    return {GuestPathKind::kFile, files_root() + guest};
  }
  auto g = classify(path);
  if (g.kind == GuestPathKind::kNone) return {};
  refresh_files(g.host);  // classify() maps under an empty root: the normalised guest path
  return {g.kind, files_root() + g.host};
}

}  // namespace gpreempt::sim::shim
