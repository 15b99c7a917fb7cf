#include "sched/match_rule.h"

#include "sched/cgroup_identity.h"

namespace gpreempt::sched {

namespace {

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool container_matches(const Glob& want, const ProcessFacts& p) {
  if (!p.container_name.empty() && want.matches(p.container_name)) return true;
  const std::string& w = want.pattern();
  // An id or its prefix as `docker ps` shows it; shorter is too ambiguous to mean an id.
  const bool id_prefix = want.literal() && w.size() >= 12 && is_hex(w);
  for (const auto& path : p.cgroups) {
    const auto identity = cgroup_identity(path);
    // A rootless id is whatever its user named a cgroup: never another's container by id.
    const auto& id = identity.container_id;
    if (!id || identity.rootless) continue;
    if (id_prefix ? id->compare(0, w.size(), w) == 0 : want.matches(*id)) return true;
  }
  return false;
}

bool pod_matches(const Glob& want, const ProcessFacts& p) {
  if (want.pattern().find('/') != std::string::npos)
    return !p.pod_name.empty() && want.matches(p.pod_namespace + "/" + p.pod_name);
  for (const auto& path : p.cgroups)
    if (auto uid = cgroup_identity(path).pod_uid; uid && want.matches(*uid)) return true;
  return false;
}

}  // namespace

bool MatchRule::matches(const ProcessFacts& p) const {
  if (empty()) return false;
  if (pid && p.key.pid != *pid) return false;
  if (uid && p.uid != *uid) return false;
  if (user && p.user != *user) return false;
  if (cmdline && !cmdline->matches(joined(p.cmdline))) return false;
  if (exe) {
    const bool by_name = exe->pattern().find('/') == std::string::npos;
    if (!exe->matches(by_name ? basename(p.exe) : std::string_view(p.exe))) return false;
  }
  if (cgroup) {
    bool any = false;
    for (const auto& path : p.cgroups) any = any || cgroup->matches(path);
    if (!any) return false;
  }
  if (container && !container_matches(*container, p)) return false;
  if (pod && !pod_matches(*pod, p)) return false;
  if (env) {
    auto it = p.environ.find(env->name);
    if (it == p.environ.end() || !env->value.matches(it->second)) return false;
  }
  return true;
}

bool MatchRule::empty() const {
  return !cmdline && !exe && !uid && !user && !cgroup && !container && !pod && !env && !pid;
}

std::string MatchRule::describe() const {
  std::string s;
  auto add = [&](const std::string& k, const std::string& v) {
    if (!s.empty()) s += ' ';
    s += k + "=" + v;
  };
  if (cmdline) add("cmdline", cmdline->pattern());
  if (exe) add("exe", exe->pattern());
  if (uid) add("uid", std::to_string(*uid));
  if (user) add("user", *user);
  if (cgroup) add("cgroup", cgroup->pattern());
  if (container) add("container", container->pattern());
  if (pod) add("pod", pod->pattern());
  if (env) add("env", env->name + "=" + env->value.pattern());
  if (pid) add("pid", std::to_string(*pid));
  return s;
}

}  // namespace gpreempt::sched
