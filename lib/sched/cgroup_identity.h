// What a cgroup path says about where a process runs: its container id and Kubernetes pod uid.
// Pure parsing of the layouts of systemd, Docker, Podman, containerd, CRI-O and the kubelet, with
// either cgroup driver (cgroupfs: /kubepods/burstable/pod<uid>/<id>; systemd:
// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/
// cri-containerd-<id>.scope) under cgroup v1 or v2.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::sched {

struct CgroupIdentity {
  std::optional<std::string> container_id;  // 64 (or >= 32) lowercase hex digits
  std::optional<std::string> pod_uid;       // with dashes, as `kubectl get pod -o yaml` shows it
};

CgroupIdentity cgroup_identity(std::string_view cgroup_path);

// The paths of /proc/PID/cgroup ("hierarchy-id:controllers:path" lines), duplicates removed,
// in file order.
std::vector<std::string> parse_cgroup_paths(std::string_view proc_cgroup_text);

}  // namespace gpreempt::sched
