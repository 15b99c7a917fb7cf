#include "sched/cgroup_identity.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "discovery/proc_parse.h"

namespace gpreempt::sched {

namespace {
bool is_uid_char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}
}  // namespace

CgroupIdentity cgroup_identity(std::string_view full_path) {
  CgroupIdentity id;
  std::string_view path = full_path;
  if (auto c = discovery::container_in_cgroup_path(path)) {
    id.container_id = std::move(c->id);
    id.rootless = c->rootless;
  }
  // Only the kubelet's own tree names pods: a "pod<uid>" a user creates elsewhere is not one.
  if (!path.starts_with("/kubepods/") && !path.starts_with("/kubepods.slice/")) path = {};
  // The last "pod" followed by a uid (36 characters: 32 hex digits and 4 separators).
  for (size_t at = path.rfind("pod"); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : path.rfind("pod", at - 1)) {
    size_t b = at + 3, e = b;
    while (e < path.size() && is_uid_char(path[e])) ++e;
    const bool bounded = (at == 0 || path[at - 1] == '/' || path[at - 1] == '-') &&
                         (e == path.size() || path[e] == '/' || path[e] == '.');
    if (e - b == 36 && bounded) {
      std::string uid(path.substr(b, e - b));
      std::replace(uid.begin(), uid.end(), '_', '-');  // the systemd driver escapes '-' as '_'
      id.pod_uid = uid;
      break;
    }
  }
  // systemd runs each user's manager as user@UID.service; "user@" followed by anything else (a
  // unit a user named so inside their own tree) is not it.
  path = full_path;
  for (size_t at = path.rfind("/user@"); at != std::string_view::npos;
       at = at == 0 ? std::string_view::npos : path.rfind("/user@", at - 1)) {
    const size_t b = at + 6;
    std::uint32_t uid = 0;
    auto [end, ec] = std::from_chars(path.data() + b, path.data() + path.size(), uid);
    const std::string_view rest = path.substr(static_cast<size_t>(end - path.data()));
    if (ec == std::errc() && end != path.data() + b &&
        (rest == ".service" || rest.starts_with(".service/"))) {
      id.user_manager_uid = uid;
      break;
    }
  }
  return id;
}

std::vector<std::string> parse_cgroup_paths(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string p(line.substr(c2 + 1));
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

}  // namespace gpreempt::sched
