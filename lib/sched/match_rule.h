// One `match` table of a class: every condition it names must hold (a class with several tables
// matches when any of them does). Conditions:
//   cmdline   glob over the arguments joined by single spaces
//   exe       glob over the executable's path; a pattern without '/' is matched to its file name
//   uid, user the real user
//   cgroup    glob over any of the process's cgroup paths
//   container a container id (full, or a prefix of at least 12 hex digits as `docker ps` shows,
//             from the cgroup path), or a glob over the container's name (Docker's name; in
//             Kubernetes the container's name in the pod spec) when the daemon could resolve it
//   pod       "NAMESPACE/NAME" glob over the pod (when the daemon could resolve it), or, without a
//             '/', the pod's uid (from the cgroup path; a glob too)
//   env       "NAME=glob": the variable is set and its value matches
//   pid       exactly this pid
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sched/glob.h"
#include "sched/process_facts.h"

namespace gpreempt::sched {

struct EnvCondition {
  std::string name;
  Glob value;
};

struct MatchRule {
  std::optional<Glob> cmdline;
  std::optional<Glob> exe;
  std::optional<uint32_t> uid;
  std::optional<std::string> user;
  std::optional<Glob> cgroup;
  std::optional<Glob> container;
  std::optional<Glob> pod;
  std::optional<EnvCondition> env;
  std::optional<int> pid;

  bool matches(const ProcessFacts& p) const;
  bool empty() const;
  // "cmdline=*serve* env=GPREEMPT_CLASS=offline", for status and logs.
  std::string describe() const;
};

}  // namespace gpreempt::sched
