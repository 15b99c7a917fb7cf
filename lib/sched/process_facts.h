// What the classifier knows about a GPU process: plain values, so rules are testable without
// /proc. The daemon fills it from /proc/PID/{stat,cmdline,exe,status,cgroup,environ}.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/process_key.h"

namespace gpreempt::sched {

struct ProcessFacts {
  ProcessKey key;
  int ppid = 0;
  std::vector<std::string> cmdline;  // argv
  std::string exe;                   // /proc/PID/exe target
  uint32_t uid = 0;                  // real uid
  std::string user;                  // its name, empty when unknown
  // One cgroup path per line of /proc/PID/cgroup (cgroup v2: one "0::" path; v1: one per
  // hierarchy), as parse_cgroup_paths returns them.
  std::vector<std::string> cgroups;
  // Environment variables the rules name (reading all of /proc/PID/environ is not needed).
  std::map<std::string, std::string> environ;
  // The container's name and Kubernetes pod when the daemon could resolve them from the runtime's
  // files (gpreemptd/container_resolver.h); the cgroup path carries only ids. Empty: unknown.
  std::string container_name;
  std::string pod_name;
  std::string pod_namespace;
};

}  // namespace gpreempt::sched
