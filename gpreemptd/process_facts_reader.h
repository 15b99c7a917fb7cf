// Reads what the classifier needs to know of a process from /proc (sched::ProcessFacts), and the
// identity that survives pid reuse (sched::ProcessKey: pid + start time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "container_resolver.h"
#include "sched/process_facts.h"
#include "sched/process_key.h"

namespace gpreemptd {

// nullopt when the process is gone (or its stat file is unreadable).
std::optional<gpreempt::sched::ProcessKey> read_process_key(const std::string& proc_root, int pid);

// Whether `key`'s process is exiting (PF_EXITING, a zombie) or gone (no stat, or its pid now names
// another process). Such a target refuses PTRACE_SEIZE and its debug ops with EPERM
// (docs/kfd-interface.md#ptrace-check): an EPERM from it means "gone", not "not permitted".
bool exiting_or_gone(const std::string& proc_root, const gpreempt::sched::ProcessKey& key);

// Everything /proc/PID/{stat,cmdline,exe,status,cgroup,environ} tells; fields the daemon may not
// read (another user's environ without privileges) stay empty. With `containers`, the container
// name and pod of a process whose cgroup path names a container id. nullopt when the process is
// gone.
std::optional<gpreempt::sched::ProcessFacts> read_process_facts(
    const std::string& proc_root, int pid, ContainerResolver* containers = nullptr);

// The parent chain of `facts`, nearest first, stopping before pid 1 (and at pid 0): what the
// classifier takes so a class covers whole process trees.
std::vector<gpreempt::sched::ProcessFacts> read_ancestors(
    const std::string& proc_root, const gpreempt::sched::ProcessFacts& facts,
    ContainerResolver* containers = nullptr);

}  // namespace gpreemptd
