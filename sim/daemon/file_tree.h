// Materialises the device's rendered sysfs/debugfs files (KfdDevice::render_files) as a real
// directory tree, so the shim can serve every path API by redirecting into it.
//
// Layout under root/: the kernel's own — the KFD class device lives in
// sys/devices/virtual/kfd/kfd and sys/class/kfd/kfd is a symlink to it (readlink shows the real
// relative target); dev/kfd is a placeholder the shim reports as a character device, and so is
// dev/dri/renderD<minor> of each simulated GPU, which the shim opens for the render node (its
// identity is what tells kfdsimd that a file a process passes is that render node).
// Only files whose bytes changed are rewritten (write to a temporary name, then rename, so a
// reader never sees half a file); files and directories the device no longer renders are removed.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpreempt::sim::daemon {

// Pure: where a render_files() key lives under root/ ("sys/class/kfd/kfd/x" → the devices/virtual
// path). Keys ending in '/' stay directories; a key ending in '@' is a symbolic link (its name
// without the '@') whose target is the value.
std::string host_relative_path(const std::string& key);

class FileTree {
 public:
  explicit FileTree(std::string root);
  // Creates the fixed skeleton (dev/kfd, dev/dri/renderD<minor> of each of `render_minors`, the
  // class symlink). Throws std::runtime_error naming the path that could not be created.
  void init(const std::vector<uint32_t>& render_minors = {});
  // Where the placeholder of render node `minor` is (init creates it).
  std::string render_node_path(uint32_t minor) const;
  // Brings root/ to exactly `files`. Returns the number of files written or removed.
  int sync(const std::map<std::string, std::string>& files);
  // The same for one subtree only: brings the host-relative path `under` (a file, or a directory
  // and everything in it; "" is all of root/) to exactly `files`, whose keys must all lie there
  // (std::invalid_argument naming the key otherwise), and leaves every other path alone. The
  // directories above `under` are created as needed and never removed here.
  int sync_under(const std::string& under, const std::map<std::string, std::string>& files);
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  std::map<std::string, std::string> files_;  // host-relative path → bytes, as on disk
  std::set<std::string> dirs_;                 // host-relative directories we created
};

}  // namespace gpreempt::sim::daemon
