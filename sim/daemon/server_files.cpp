// The materialised file tree: which parts of the device's sysfs/debugfs (and the DRM nodes' sysfs)
// a lookup can reach, re-rendered only when the state they show may have changed since.
#include "sim/daemon/drm_files.h"
#include "sim/daemon/server.h"

namespace gpreempt::sim::daemon {

namespace {

std::map<std::string, std::string> drm_files(const DeviceProfile& profile, const KfdDevice& device) {
  std::map<uint32_t, uint64_t> used;
  for (const auto& g : profile.gpus) used[g.gpu_id] = device.vram_used(g.gpu_id);
  return drm_sysfs_files(profile, used);
}

}  // namespace

std::map<std::string, std::string> Server::rendered_files() const {
  auto files = device_->render_files();
  files.merge(drm_files(profile_, *device_));
  return files;
}

void Server::refresh_files(const std::string& guest_path) {
  if (eager_files_) {
    auto& at = rendered_at_[""];
    if (at != state_gen_) {
      at = 0;  // stays stale if rendering throws
      tree_.sync(rendered_files());
      at = state_gen_;
    }
    return;
  }
  if (guest_path.empty()) {
    // Everything (kfdsim files, tests): rendered whatever the generations say, so what it shows
    // never depends on the bookkeeping that lets lookups skip work.
    rendered_at_.clear();
    tree_.sync(rendered_files());
    for (const auto& part : parts_for_lookup("")) rendered_at_[part.subtree] = state_gen_;
    return;
  }
  if (guest_path.rfind("/sys/class/drm", 0) == 0) {
    // The GPUs' PCI device files show VRAM in use: rendered again for each lookup.
    const std::string root = kDrmPciRoot;
    std::map<std::string, std::string> pci;
    for (auto& [k, v] : drm_files(profile_, *device_))
      if (k.compare(0, root.size() + 1, root + "/") == 0) pci.emplace(k, std::move(v));
    tree_.sync_under(root, pci);
    return;
  }
  for (const auto& part : parts_for_lookup(guest_path)) {
    auto& at = rendered_at_[part.subtree];
    if (at == state_gen_) continue;
    at = 0;
    tree_.sync_under(part.subtree, device_->render_files(part.part, part.pid));
    at = state_gen_;
    if (part.part == FilePart::kProcesses) {
      // Every process directory is current now; forgetting their entries also drops those of
      // processes that are gone, so the map stays as small as the machine.
      const std::string prefix = part.subtree + "/";
      for (auto it = rendered_at_.lower_bound(prefix);
           it != rendered_at_.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
        it = rendered_at_.erase(it);
    }
  }
}

}  // namespace gpreempt::sim::daemon
