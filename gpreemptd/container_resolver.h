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
//               io.kubernetes.cri.sandbox-name, io.kubernetes.cri.sandbox-namespace; nerdctl's
//               annotation nerdctl/name (nerdctl copies its "nerdctl/" labels into the spec's
//               annotations: pkg/labels/labels.go,
//               propagateInternalContainerdLabelsToOCIAnnotations in pkg/cmd/container/create.go,
//               containerd/nerdctl); for `ctr`, which has no names, the id the user chose is the
//               name (namespaces other than k8s.io and moby)
//   CRI-O       <crio root>/<id>/userdata/config.json: annotations io.kubernetes.container.name,
//               io.kubernetes.pod.name, io.kubernetes.pod.namespace
//   Podman      <graphroot>/<driver>-containers/containers.json and volatile-containers.json
//   (`--rm`
//               containers), containers/storage's list of {"id", "names": [...], ...}
//               (containers.go: type Container, newContainerStore; store.go: driverPrefix +
//               "containers", containers/storage). Podman names its storage container after itself
//               (libpod/storage.go CreateContainerStorage, containers/podman); its OCI bundle
//               carries no name (only io.container.manager=libpod), and its pods' names are only in
//               its own database, so a Podman pod name is not resolved.
//
// Rootless Podman and nerdctl keep these files per user: for a container under user@UID.service the
// per-user templates (podman_rootless_root, containerd_rootless_root) are expanded for that uid.
// The roots are configurable ([daemon] docker_root, containerd_root, crio_root, podman_root, and
// the two templates) so a DaemonSet can mount the host's directories anywhere, and tests can use
// fixture trees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "daemon_config.h"

namespace gpreemptd {

// ContainerRoots: daemon_config.h.

struct ContainerInfo {
  std::string runtime;   // "docker", "containerd", "nerdctl", "cri-o", "podman"
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
// containers/storage's containers.json: the entry of container `id`; nullopt with *error empty when
// the list does not hold it (or holds it without a name).
std::optional<ContainerInfo> parse_storage_containers(std::string_view text,
                                                      const std::string& file,
                                                      const std::string& id, std::string* error);

class ContainerResolver {
 public:
  using Warn = std::function<void(const std::string&)>;
  // A uid's user name and home directory for the per-user templates' %u and %h; false when the uid
  // is unknown. The default asks the passwd database (getpwuid_r).
  using UserLookup = std::function<bool(std::uint32_t uid, std::string& name, std::string& home)>;
  // `warn` hears each unreadable or malformed runtime file once (per container id).
  explicit ContainerResolver(ContainerRoots roots, Warn warn = {}, UserLookup users = {});

  // The container a cgroup path (a line of /proc/PID/cgroup) is in, as the runtimes' files name
  // it: by the id cgroup_identity finds, with the user whose manager the path is under for the
  // rootless roots; or, for a path /<namespace>/<id> (containerd's default cgroup, `ctr run`),
  // the task bundle at <containerd root>/<namespace>/<id>. nullptr: not a container any root knows.
  const ContainerInfo* lookup_cgroup(std::string_view cgroup_path);

  // What the runtimes' files say about container `id` (full id, as the cgroup path has it);
  // `user_uid` adds that user's rootless roots. nullptr when no root holds it. Answers, found or
  // not, are cached per id and user: a container's name and pod do not change while it runs, and
  // its files exist before its first process does.
  const ContainerInfo* lookup(const std::string& id, std::optional<std::uint32_t> user_uid = {});
  const ContainerRoots& roots() const { return roots_; }
  std::size_t cached() const { return cache_.size(); }

  // Bound on the cache: ids of containers long gone are dropped all at once beyond it.
  static constexpr std::size_t kMaxCached = 4096;
  // Bounds on what one runtime file may hold (a larger one is refused and warned about): one
  // container's config, and a store's list of every container (containers.json).
  static constexpr std::size_t kMaxFileBytes = 1u << 20;
  static constexpr std::size_t kMaxListBytes = 16u << 20;

 private:
  using Parse = std::function<std::optional<ContainerInfo>(std::string_view, const std::string&,
                                                           std::string*)>;
  const ContainerInfo* cached_or(const std::string& key,
                                 const std::function<std::optional<ContainerInfo>()>& find);
  std::optional<ContainerInfo> find(const std::string& id, std::optional<std::uint32_t> user_uid);
  // The task bundle of `id` in containerd namespace `ns` under `root`, when it names the container.
  std::optional<ContainerInfo> from_containerd(const std::string& root, const std::string& ns,
                                               const std::string& id);
  // The entry of `id` in the containers.json files under a containers/storage graphroot.
  std::optional<ContainerInfo> from_storage(const std::string& graphroot, const std::string& id);
  // A per-user template expanded for `uid`; nullopt (warned about) when it cannot be.
  std::optional<std::string> user_root(const char* key, const std::string& tmpl, std::uint32_t uid);
  // Reads and parses root/relative when it exists (bounded, no symlink below `root`:
  // bounded_file.h); a problem is warned about and counts as not found.
  std::optional<ContainerInfo> from_file(const std::string& root, const std::string& relative,
                                         const Parse& parse);

  ContainerRoots roots_;
  Warn warn_;
  UserLookup users_;
  std::map<std::string, std::optional<ContainerInfo>> cache_;
};

}  // namespace gpreemptd
