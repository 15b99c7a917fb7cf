// Which match rules a process cannot satisfy by itself (docs/security.md, "Who may preempt whom").
//
// A class that may preempt another (some class has a lower priority) lets its members suspend
// other users' GPU work, so its rules must name what the kernel, root or the container runtime
// decides: the real uid (`uid`, `user`), a cgroup under a root-created top-level cgroup
// (`cgroup` anchored there), the container or pod the runtime reports (`container`, `pod`).
// `cmdline`, `exe` and `env` are the process's own choice (`exec -a serve`, a copied binary,
// `GPREEMPT_CLASS=online ./job`); they may narrow an anchored rule but never stand alone in it,
// unless the config acknowledges a single-tenant node.
#pragma once

#include <string>
#include <string_view>

#include "sched/match_rule.h"

namespace gpreempt::sched {

// "" when a cgroup glob can only match cgroups a process cannot create or enter on its own: an
// absolute pattern whose first component is literal (only root creates top-level cgroups), and,
// under /user.slice, that also names the user's literal user-UID.slice (systemd delegates
// user@UID.service to that user, who may create any cgroup name inside it). Else why not.
std::string cgroup_anchor_problem(std::string_view pattern);

// "" when `rule` names at least one condition the process cannot set itself; else what makes it
// self-declared ("cmdline and env are the process's own", "cgroup \"*x*\" is not anchored ...").
std::string self_declared_problem(const MatchRule& rule);

}  // namespace gpreempt::sched
