#include "sched/class_trust.h"

#include <vector>

namespace gpreempt::sched {

namespace {

bool has_wildcard(std::string_view s) {
  return s.find_first_of("*?[\\") != std::string_view::npos;
}

// The component of `pattern` starting at `from` (after a '/'), up to the next '/' or the end.
std::string_view component(std::string_view pattern, std::size_t from) {
  const std::size_t slash = pattern.find('/', from);
  return pattern.substr(from,
                        slash == std::string_view::npos ? pattern.size() - from : slash - from);
}

bool is_user_slice(std::string_view c) {
  if (!c.starts_with("user-") || !c.ends_with(".slice")) return false;
  std::string_view uid = c.substr(5, c.size() - 5 - 6);
  return !uid.empty() && uid.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string cgroup_anchor_problem(std::string_view pattern) {
  const std::string quoted = "cgroup \"" + std::string(pattern) + "\"";
  if (pattern.empty() || pattern[0] != '/')
    return quoted +
           " is not anchored at the root (start it with '/' and a top-level cgroup only "
           "root creates, e.g. \"/kubepods.slice/*\" or \"/system.slice/vllm.service\"): "
           "it can match a cgroup a user creates in a delegated subtree";
  const std::string_view top = component(pattern, 1);
  if (top.empty() || has_wildcard(top))
    return quoted +
           " has a wildcard in its first component: name the top-level cgroup literally "
           "(e.g. \"/kubepods.slice/*\"), so it cannot match a cgroup a user creates in a "
           "delegated subtree";
  if (top == "user.slice") {
    const std::size_t next = 1 + top.size() + 1;
    const std::string_view user = next <= pattern.size() ? component(pattern, next) : "";
    if (!is_user_slice(user))
      return quoted +
             " reaches under /user.slice without naming one user's literal "
             "user-UID.slice: systemd delegates user@UID.service to each user, who may "
             "name cgroups there as they like (write uid = UID instead)";
  }
  return "";
}

std::string self_declared_problem(const MatchRule& rule) {
  if (rule.uid || rule.user || rule.container || rule.pod) return "";
  std::string cgroup_problem;
  if (rule.cgroup) {
    cgroup_problem = cgroup_anchor_problem(rule.cgroup->pattern());
    if (cgroup_problem.empty()) return "";
  }
  std::vector<const char*> own;
  if (rule.cmdline) own.push_back("cmdline");
  if (rule.exe) own.push_back("exe");
  if (rule.env) own.push_back("env");
  std::string s;
  for (std::size_t i = 0; i < own.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == own.size() ? " and " : ", ") + own[i];
  if (!own.empty())
    s += std::string(own.size() == 1 ? " is" : " are") +
         " what the process sets itself (exec -a, a copied binary, its own environment)";
  auto add = [&](const std::string& why) { s += (s.empty() ? "" : "; ") + why; };
  if (rule.pid) add("pid is a number any process may come to hold (pids are reused)");
  if (!cgroup_problem.empty()) add(cgroup_problem);
  return s;
}

}  // namespace gpreempt::sched
