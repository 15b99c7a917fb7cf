// Container names for the classification rules (`match = { container = "vllm-*" }`,
// `pod = "inference/vllm-*"`). The cgroup path carries only a container id; the name and the pod
// are in the files each runtime keeps on the node, which a node agent can read without talking to
// the runtime's API:
//
//   Docker      <docker root>/<id>/config.v2.json: "Name" ("/web", the slash dropped) and, for
//               containers the kubelet made through dockershim/cri-dockerd, Config.Labels
//               io.kubernetes.container.name / io.kubernetes.pod.name / io.kubernetes.pod.namespace
//   containerd  <containerd root>/<namespace>/<id>/config.json (the OCI bundle; Kubernetes uses the
//               namespace k8s.io): annotations io.kubernetes.cri.container-name,
//               io.kubernetes.cri.sandbox-name, io.kubernetes.cri.sandbox-namespace
//   CRI-O       <crio root>/<id>/userdata/config.json: annotations io.kubernetes.container.name,
//               io.kubernetes.pod.name, io.kubernetes.pod.namespace
//
// The roots are configurable ([daemon] docker_root, containerd_root, crio_root) so a DaemonSet
// can mount the host's directories anywhere, and tests can use fixture trees.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sched/config.h"

namespace gpreemptd {

using ContainerRoots = gpreempt::sched::ContainerRoots;

struct ContainerInfo {
  std::string runtime;   // "docker", "containerd", "cri-o"
  std::string file;      // the file it came from
  std::string name;      // the container's name (Kubernetes: the container's name in the pod spec)
  std::string pod_name;  // empty outside Kubernetes
  std::string pod_namespace;  // empty outside Kubernetes
};

// Parse one runtime file. nullopt and *error ("FILE: not JSON: ...", "FILE: no \"Name\" string")
// when the text is not what the runtime writes.
std::optional<ContainerInfo> parse_docker_config(std::string_view text, const std::string& file,
                                                 std::string* error);
std::optional<ContainerInfo> parse_containerd_bundle(std::string_view text, const std::string& file,
                                                     std::string* error);
std::optional<ContainerInfo> parse_crio_bundle(std::string_view text, const std::string& file,
                                               std::string* error);

class ContainerResolver {
 public:
  using Warn = std::function<void(const std::string&)>;
  // `warn` hears each unreadable or malformed runtime file once (per container id).
  explicit ContainerResolver(ContainerRoots roots, Warn warn = {});

  // What the runtimes' files say about container `id` (full id, as the cgroup path has it);
  // nullptr when no runtime root holds it. Answers, found or not, are cached per id: a container's
  // name and pod do not change while it runs, and its files exist before its first process does.
  const ContainerInfo* lookup(const std::string& id);
  const ContainerRoots& roots() const { return roots_; }
  std::size_t cached() const { return cache_.size(); }

  // Bound on the cache: ids of containers long gone are dropped all at once beyond it.
  static constexpr std::size_t kMaxCached = 4096;

 private:
  std::optional<ContainerInfo> find(const std::string& id);
  // Reads and parses `path` when it exists; a problem is warned about and counts as not found.
  std::optional<ContainerInfo> from_file(const std::string& path,
                                         std::optional<ContainerInfo> (*parse)(std::string_view,
                                                                               const std::string&,
                                                                               std::string*));

  ContainerRoots roots_;
  Warn warn_;
  std::map<std::string, std::optional<ContainerInfo>> cache_;
};

}  // namespace gpreemptd
