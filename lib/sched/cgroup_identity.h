// What a cgroup path says about where a process runs: its container id and Kubernetes pod uid.
// Pure parsing of the layouts of systemd, Docker, Podman, containerd, CRI-O and the kubelet, with
// either cgroup driver (cgroupfs: /kubepods/burstable/pod<uid>/<id>; systemd:
// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/
// cri-containerd-<id>.scope) under cgroup v1 or v2.
//
// Podman (libpod/container_internal_linux.go getOCICgroupPath, containers/podman): systemd manager
// "<parent>:libpod:<id>", i.e. machine.slice/libpod-<id>.scope (rootful),
// user.slice/libpod-<id>.scope under the user's systemd (rootless),
// machine-libpod_pod_<pod>.slice/libpod-<id>.scope in a pod; cgroupfs manager
// /libpod_parent/libpod-<id>; --cgroups=split (quadlet) <own>/libpod-payload-<id>. nerdctl
// (pkg/cmd/container/run_cgroup_linux.go generateCgroupPath, containerd/nerdctl): systemd
// "system.slice:nerdctl:<id>" (rootless: user.slice), i.e. system.slice/nerdctl-<id>.scope;
// cgroupfs: containerd's default /<namespace>/<id>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::sched {

// Only a runtime's own position counts (discovery::container_in_cgroup_path): a cgroup a user
// named `docker-<id>.scope` in their delegated subtree is no container, and a pod uid is read only
// under the kubelet's /kubepods or /kubepods.slice.
struct CgroupIdentity {
  std::optional<std::string> container_id;  // 64 (or >= 32) lowercase hex digits
  // The id is under a user's own systemd (user_manager_uid): rootless, that user's claim only.
  bool rootless = false;
  std::optional<std::string> pod_uid;       // with dashes, as `kubectl get pod -o yaml` shows it
  // The uid whose systemd user manager (user@UID.service) the cgroup is under: rootless Podman and
  // nerdctl put their containers there, and keep their files in that user's directories.
  std::optional<std::uint32_t> user_manager_uid;
};

CgroupIdentity cgroup_identity(std::string_view cgroup_path);

// The paths of /proc/PID/cgroup ("hierarchy-id:controllers:path" lines), duplicates removed,
// in file order.
std::vector<std::string> parse_cgroup_paths(std::string_view proc_cgroup_text);

}  // namespace gpreempt::sched
