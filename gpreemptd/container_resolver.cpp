#include "container_resolver.h"

#include "bounded_file.h"


#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/text_file.h"
#include "passwd_entry.h"
#include "sched/cgroup_identity.h"

namespace gpreemptd {

namespace {

using Json = nlohmann::json;

std::optional<Json> parse_json(std::string_view text, const std::string& file, std::string* error) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    *error = file + ": not JSON (" + e.what() + ")";
    return std::nullopt;
  }
}

std::optional<Json> parse_object(std::string_view text, const std::string& file,
                                 std::string* error) {
  auto j = parse_json(text, file, error);
  if (!j) return std::nullopt;
  if (!j->is_object()) {
    *error = file + ": expected a JSON object, found " + std::string(j->type_name());
    return std::nullopt;
  }
  return j;
}

// The string at j[key], "" when absent; false (and *error) when present but not a string.
bool string_field(const Json& j, const char* key, std::string& out, const std::string& file,
                  const std::string& where, std::string* error) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) {
    *error = file + ": " + where + "\"" + key + "\" must be a string, not " + it->type_name();
    return false;
  }
  out = it->get<std::string>();
  return true;
}

// An OCI bundle's "annotations": nullptr when absent (not made by the kubelet nor nerdctl).
const Json* annotations_of(const Json& j, const std::string& file, std::string* error, bool* ok) {
  *ok = true;
  auto a = j.find("annotations");
  if (a == j.end() || a->is_null()) return nullptr;
  if (!a->is_object()) {
    *error = file + ": \"annotations\" must be an object, not " + std::string(a->type_name());
    *ok = false;
    return nullptr;
  }
  return &*a;
}

// Kubernetes names from an OCI bundle's "annotations" (absent: not a Kubernetes container).
std::optional<ContainerInfo> from_annotations(const Json& j, const std::string& file,
                                              std::string* error, const char* runtime,
                                              const char* container_key, const char* pod_key,
                                              const char* namespace_key) {
  ContainerInfo info;
  info.runtime = runtime;
  info.file = file;
  bool ok = true;
  const Json* a = annotations_of(j, file, error, &ok);
  if (!ok) return std::nullopt;
  if (!a) return info;
  const std::string where = "annotations.";
  if (!string_field(*a, container_key, info.name, file, where, error) ||
      !string_field(*a, pod_key, info.pod_name, file, where, error) ||
      !string_field(*a, namespace_key, info.pod_namespace, file, where, error))
    return std::nullopt;
  return info;
}

bool is_container_id(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A containerd namespace or container id: containerd's identifiers package (validate.go) allows
// [A-Za-z0-9]+ ([._-][A-Za-z0-9]+)*, at most 76 characters, so one is always a plain path
// component (never "..", never a '/').
bool is_containerd_identifier(std::string_view s) {
  if (s.empty() || s.size() > 76) return false;
  bool after_separator = true;  // a separator may neither start nor follow another
  for (char c : s) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && (after_separator || !(c == '.' || c == '_' || c == '-'))) return false;
    after_separator = !alnum;
  }
  return !after_separator;
}

}  // namespace

std::optional<ContainerInfo> parse_docker_config(std::string_view text, const std::string& file,
                                                 std::string* error) {
  auto j = parse_object(text, file, error);
  if (!j) return std::nullopt;
  ContainerInfo info;
  info.runtime = "docker";
  info.file = file;
  auto name = j->find("Name");
  if (name == j->end() || !name->is_string()) {
    *error = file + ": no \"Name\" string (is this a Docker config.v2.json?)";
    return std::nullopt;
  }
  info.name = name->get<std::string>();
  if (!info.name.empty() && info.name[0] == '/') info.name.erase(0, 1);
  // A container the kubelet made through dockershim or cri-dockerd: its Docker name is
  // k8s_<container>_<pod>_<namespace>_<uid>_<n>; the labels say which part is which.
  auto config = j->find("Config");
  if (config != j->end() && config->is_object()) {
    auto labels = config->find("Labels");
    if (labels != config->end() && labels->is_object()) {
      const std::string where = "Config.Labels.";
      std::string k8s_name;
      if (!string_field(*labels, "io.kubernetes.container.name", k8s_name, file, where, error) ||
          !string_field(*labels, "io.kubernetes.pod.name", info.pod_name, file, where, error) ||
          !string_field(*labels, "io.kubernetes.pod.namespace", info.pod_namespace, file, where,
                        error))
        return std::nullopt;
      if (!k8s_name.empty()) info.name = k8s_name;
    }
  }
  return info;
}

std::optional<ContainerInfo> parse_containerd_bundle(std::string_view text, const std::string& file,
                                                     std::string* error) {
  auto j = parse_object(text, file, error);
  if (!j) return std::nullopt;
  auto info =
      from_annotations(*j, file, error, "containerd", "io.kubernetes.cri.container-name",
                       "io.kubernetes.cri.sandbox-name", "io.kubernetes.cri.sandbox-namespace");
  if (!info || !info->name.empty()) return info;
  bool ok = true;
  if (const Json* a = annotations_of(*j, file, error, &ok)) {
    if (!string_field(*a, "nerdctl/name", info->name, file, "annotations.", error))
      return std::nullopt;
    if (!info->name.empty()) info->runtime = "nerdctl";
  }
  return info;
}

std::optional<ContainerInfo> parse_crio_bundle(std::string_view text, const std::string& file,
                                               std::string* error) {
  auto j = parse_object(text, file, error);
  if (!j) return std::nullopt;
  return from_annotations(*j, file, error, "cri-o", "io.kubernetes.container.name",
                          "io.kubernetes.pod.name", "io.kubernetes.pod.namespace");
}

std::optional<ContainerInfo> parse_storage_containers(std::string_view text,
                                                      const std::string& file,
                                                      const std::string& id, std::string* error) {
  error->clear();
  auto parsed = parse_json(text, file, error);
  if (!parsed) return std::nullopt;
  const Json& j = *parsed;
  if (!j.is_array()) {
    *error = file + ": expected a JSON array of containers, found " + std::string(j.type_name());
    return std::nullopt;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Json& c = j[i];
    const std::string where = "[" + std::to_string(i) + "]";
    if (!c.is_object()) {
      *error = file + ": " + where + " must be an object, not " + std::string(c.type_name());
      return std::nullopt;
    }
    auto cid = c.find("id");
    if (cid == c.end() || !cid->is_string()) {
      *error = file + ": " + where +
               " has no \"id\" string (is this containers/storage's containers.json?)";
      return std::nullopt;
    }
    if (cid->get_ref<const std::string&>() != id) continue;
    auto names = c.find("names");
    if (names == c.end() || names->is_null()) return std::nullopt;  // "names" is omitempty
    if (!names->is_array() || (!names->empty() && !(*names)[0].is_string())) {
      *error = file + ": " + where + ".\"names\" must be an array of strings";
      return std::nullopt;
    }
    if (names->empty()) return std::nullopt;
    ContainerInfo info;
    info.runtime = "podman";
    info.file = file;
    // Podman gives its storage container exactly one name, its own, and `podman rename` sets it
    // anew (libpod/runtime_ctr.go renameContainer: store.SetNames(id, []string{name})).
    info.name = (*names)[0].get<std::string>();
    return info;
  }
  return std::nullopt;
}

ContainerResolver::ContainerResolver(ContainerRoots roots, Warn warn, UserLookup users)
    : roots_(std::move(roots)),
      warn_(std::move(warn)),
      users_(users ? std::move(users) : UserLookup(passwd_entry)) {}

const ContainerInfo* ContainerResolver::cached_or(
    const std::string& key, const std::function<std::optional<ContainerInfo>()>& find) {
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    if (cache_.size() >= kMaxCached) cache_.clear();
    it = cache_.emplace(key, find()).first;
  }
  return it->second ? &*it->second : nullptr;
}

const ContainerInfo* ContainerResolver::lookup(const std::string& id,
                                               std::optional<std::uint32_t> user_uid) {
  if (!is_container_id(id)) return nullptr;  // never a path component we did not expect
  const std::string key = user_uid ? id + "@" + std::to_string(*user_uid) : id;
  return cached_or(key, [&] { return find(id, user_uid); });
}

const ContainerInfo* ContainerResolver::lookup_cgroup(std::string_view path) {
  auto identity = gpreempt::sched::cgroup_identity(path);
  if (identity.container_id) return lookup(*identity.container_id, identity.user_manager_uid);
  // containerd's own default cgroup, /<namespace>/<id> (nerdctl's generateCgroupPath relies on
  // it for the cgroupfs driver): the ids `ctr run` takes are the user's words, not hex. Only a
  // bundle at exactly that place makes it a container; "/system.slice/foo.service" finds none.
  if (roots_.containerd.empty() || !path.starts_with('/')) return nullptr;
  const std::size_t slash = path.find('/', 1);
  if (slash == std::string_view::npos) return nullptr;
  const std::string_view ns = path.substr(1, slash - 1), id = path.substr(slash + 1);
  if (!is_containerd_identifier(ns) || !is_containerd_identifier(id)) return nullptr;
  return cached_or(std::string(path), [&] {
    return from_containerd(roots_.containerd, std::string(ns), std::string(id));
  });
}

std::optional<ContainerInfo> ContainerResolver::from_file(const std::string& root,
                                                          const std::string& relative,
                                                          const Parse& parse) {
  const std::string path = root + "/" + relative;
  // containers.json lists every container of a store; one container's file is a few kilobytes.
  const std::size_t limit = relative.ends_with("containers.json") ? kMaxListBytes : kMaxFileBytes;
  auto text = read_file_beneath(root, relative, limit);
  if (!text) {
    if (errno != ENOENT && errno != ENOTDIR && warn_)
      warn_(path + ": cannot read: " +
            (errno == EFBIG   ? "larger than " + std::to_string(limit) + " bytes"
             : errno == ELOOP || errno == EXDEV ? std::string("a symlink (not followed)")
                                                : std::string(std::strerror(errno))));
    return std::nullopt;
  }
  std::string error;
  auto info = parse(*text, path, &error);
  if (!info && !error.empty() && warn_) warn_(error);
  return info;
}

std::optional<ContainerInfo> ContainerResolver::from_containerd(const std::string& root,
                                                                const std::string& ns,
                                                                const std::string& id) {
  auto info = from_file(root, ns + "/" + id + "/config.json", parse_containerd_bundle);
  if (!info || !info->name.empty()) return info;
  // No name in the bundle. k8s.io: a sandbox (pause) container; moby: Docker's, named in Docker's
  // own file. Elsewhere it is `ctr`'s, whose containers have only the id the user gave.
  if (ns == "k8s.io" || ns == "moby") return std::nullopt;
  info->name = id;
  return info;
}

std::optional<ContainerInfo> ContainerResolver::from_storage(const std::string& graphroot,
                                                             const std::string& id) {
  // One "<driver>-containers" directory per storage driver used (overlay, vfs, btrfs, zfs).
  auto entries = gpreempt::list_directory(graphroot);
  if (!entries) return std::nullopt;
  const Parse parse = [&id](std::string_view text, const std::string& file, std::string* error) {
    return parse_storage_containers(text, file, id, error);
  };
  for (const auto& e : *entries) {
    if (!e.ends_with("-containers")) continue;
    for (const char* list : {"containers.json", "volatile-containers.json"})
      if (auto i = from_file(graphroot, e + "/" + list, parse)) return i;
  }
  return std::nullopt;
}

std::optional<std::string> ContainerResolver::user_root(const char* key, const std::string& tmpl,
                                                        std::uint32_t uid) {
  std::string user, home;
  if (tmpl.find("%h") != std::string::npos || tmpl.find("%u") != std::string::npos)
    users_(uid, user, home);
  auto root = expand_user_root(tmpl, uid, user, home);
  if (!root && warn_)
    warn_(std::string(key) + " \"" + tmpl + "\": uid " + std::to_string(uid) +
          " has no user name or home directory in the passwd database gpreemptd sees");
  return root;
}

std::optional<ContainerInfo> ContainerResolver::find(const std::string& id,
                                                     std::optional<std::uint32_t> user_uid) {
  // A cgroup under a user's own systemd is that user's to name: its id is looked up only in that
  // user's rootless roots, never in the rootful runtimes' (where it would borrow the name and pod
  // of the rootful container whose id the user copied).
  if (user_uid) {
    if (!roots_.containerd_rootless.empty())
      if (auto root = user_root("containerd_rootless_root", roots_.containerd_rootless, *user_uid))
        if (auto namespaces = gpreempt::list_directory(*root))
          for (const auto& ns : *namespaces)
            if (auto i = from_containerd(*root, ns, id)) return i;
    if (!roots_.podman_rootless.empty())
      if (auto root = user_root("podman_rootless_root", roots_.podman_rootless, *user_uid))
        if (auto i = from_storage(*root, id)) return i;
    return std::nullopt;
  }
  if (!roots_.docker.empty())
    if (auto i = from_file(roots_.docker, id + "/config.v2.json", parse_docker_config))
      return i;
  // One directory per containerd namespace: k8s.io for the kubelet's containers, moby for
  // Docker's (no names there: Docker's own file has them), default for ctr and nerdctl.
  auto containerd = [&](const std::string& root) -> std::optional<ContainerInfo> {
    if (auto namespaces = gpreempt::list_directory(root))
      for (const auto& ns : *namespaces)
        if (auto i = from_containerd(root, ns, id)) return i;
    return std::nullopt;
  };
  if (!roots_.containerd.empty())
    if (auto i = containerd(roots_.containerd)) return i;
  // A bundle there without Kubernetes' names names nothing: Podman with transient_store = true
  // keeps its bundles in that same runroot (libpod bundlePath), and its name is elsewhere.
  if (!roots_.crio.empty())
    if (auto i = from_file(roots_.crio, id + "/userdata/config.json", parse_crio_bundle);
        i && !i->name.empty())
      return i;
  if (!roots_.podman.empty())
    if (auto i = from_storage(roots_.podman, id)) return i;
  return std::nullopt;
}

}  // namespace gpreemptd
