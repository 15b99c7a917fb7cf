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

bool container_matches(const std::string& want, const ProcessFacts& p) {
  if (!p.container_name.empty() && p.container_name == want) return true;
  if (want.size() < 12) return false;  // shorter than docker's short id: too ambiguous
  for (const auto& path : p.cgroups) {
    auto id = cgroup_identity(path).container_id;
    if (id && id->compare(0, want.size(), want) == 0) return true;
  }
  return false;
}

bool pod_matches(const std::string& want, const ProcessFacts& p) {
  for (const auto& path : p.cgroups)
    if (auto uid = cgroup_identity(path).pod_uid; uid && *uid == want) return true;
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
  if (container) add("container", *container);
  if (pod) add("pod", *pod);
  if (env) add("env", env->name + "=" + env->value.pattern());
  if (pid) add("pid", std::to_string(*pid));
  return s;
}

}  // namespace gpreempt::sched
