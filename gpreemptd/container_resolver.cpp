#include "container_resolver.h"

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/text_file.h"

namespace gpreemptd {

namespace {

using Json = nlohmann::json;

std::optional<Json> parse_object(std::string_view text, const std::string& file,
                                 std::string* error) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    *error = file + ": not JSON (" + e.what() + ")";
    return std::nullopt;
  }
  if (!j.is_object()) {
    *error = file + ": expected a JSON object, found " + std::string(j.type_name());
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

// Kubernetes names from an OCI bundle's "annotations" (absent: not a Kubernetes container).
std::optional<ContainerInfo> from_annotations(std::string_view text, const std::string& file,
                                              std::string* error, const char* runtime,
                                              const char* container_key, const char* pod_key,
                                              const char* namespace_key) {
  auto j = parse_object(text, file, error);
  if (!j) return std::nullopt;
  ContainerInfo info;
  info.runtime = runtime;
  info.file = file;
  auto a = j->find("annotations");
  if (a == j->end() || a->is_null()) return info;
  if (!a->is_object()) {
    *error = file + ": \"annotations\" must be an object, not " + std::string(a->type_name());
    return std::nullopt;
  }
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
  return from_annotations(text, file, error, "containerd", "io.kubernetes.cri.container-name",
                          "io.kubernetes.cri.sandbox-name", "io.kubernetes.cri.sandbox-namespace");
}

std::optional<ContainerInfo> parse_crio_bundle(std::string_view text, const std::string& file,
                                               std::string* error) {
  return from_annotations(text, file, error, "cri-o", "io.kubernetes.container.name",
                          "io.kubernetes.pod.name", "io.kubernetes.pod.namespace");
}

ContainerResolver::ContainerResolver(ContainerRoots roots, Warn warn)
    : roots_(std::move(roots)), warn_(std::move(warn)) {}

const ContainerInfo* ContainerResolver::lookup(const std::string& id) {
  if (!is_container_id(id)) return nullptr;  // never a path component we did not expect
  auto it = cache_.find(id);
  if (it == cache_.end()) {
    if (cache_.size() >= kMaxCached) cache_.clear();
    it = cache_.emplace(id, find(id)).first;
  }
  return it->second ? &*it->second : nullptr;
}

std::optional<ContainerInfo> ContainerResolver::from_file(
    const std::string& path,
    std::optional<ContainerInfo> (*parse)(std::string_view, const std::string&, std::string*)) {
  auto text = gpreempt::read_text_file(path);
  if (!text) {
    if (errno != ENOENT && errno != ENOTDIR && warn_)
      warn_(path + ": cannot read: " + std::strerror(errno));
    return std::nullopt;
  }
  std::string error;
  auto info = parse(*text, path, &error);
  if (!info && warn_) warn_(error);
  return info;
}

std::optional<ContainerInfo> ContainerResolver::find(const std::string& id) {
  if (!roots_.docker.empty())
    if (auto i = from_file(roots_.docker + "/" + id + "/config.v2.json", parse_docker_config))
      return i;
  if (!roots_.containerd.empty()) {
    // One directory per containerd namespace: k8s.io for the kubelet's containers, moby for
    // Docker's (no names there: Docker's own file has them), default for ctr and nerdctl.
    if (auto namespaces = gpreempt::list_directory(roots_.containerd))
      for (const auto& ns : *namespaces)
        if (auto i = from_file(roots_.containerd + "/" + ns + "/" + id + "/config.json",
                               parse_containerd_bundle);
            i && !i->name.empty())
          return i;
  }
  if (!roots_.crio.empty())
    if (auto i = from_file(roots_.crio + "/" + id + "/userdata/config.json", parse_crio_bundle))
      return i;
  return std::nullopt;
}

}  // namespace gpreemptd
