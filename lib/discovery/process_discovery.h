// Finding GPU processes on a live system: who has /dev/kfd open, their KFD queues from per-process
// sysfs, their command line and container, and the container <-> host pid mapping (NSpid).
// This is the I/O side of lib/discovery; every path is taken from a `SystemRoots` so tests (and
// the simulator's shim) can point it at another tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "discovery/queue_map.h"

namespace gpreempt::discovery {

struct SystemRoots {
  std::string proc = "/proc";
  std::string kfd_sysfs = "/sys/class/kfd/kfd";  // holds topology/ and proc/
  std::string kfd_device = "/dev/kfd";
};

struct ProcessInfo {
  int pid = 0;                            // as seen from `roots.proc` (the host, normally)
  std::vector<int> nspid;                 // NSpid: host first, innermost (container) last
  std::optional<int> container_pid;       // innermost pid when it differs from `pid`
  std::vector<std::string> cmdline;
  std::optional<std::string> container_id;
  bool has_kfd_open = false;
  bool has_kfd_sysfs = false;             // /sys/class/kfd/kfd/proc/<pid> exists
  std::vector<KnownQueue> queues;         // from sysfs
  std::vector<std::string> problems;      // unreadable files, with the reason
};

// Pids (as numbered in roots.proc) with an fd open on roots.kfd_device. Processes whose fd
// directory cannot be read (other users, without privileges) are skipped; `unreadable` counts them.
std::vector<int> kfd_users(const SystemRoots& roots, std::size_t* unreadable = nullptr);

// Pids with a directory under <kfd_sysfs>/proc (every process KFD knows, readable without root).
std::vector<int> kfd_sysfs_processes(const SystemRoots& roots);

// Queues of one process from <kfd_sysfs>/proc/<pid>/queues/<id>/{type,gpuid,size}.
std::vector<KnownQueue> sysfs_queues(const SystemRoots& roots, int pid, std::vector<std::string>* problems = nullptr);

ProcessInfo describe_process(const SystemRoots& roots, int pid);

// Every GPU process: the union of kfd_users and kfd_sysfs_processes, described; restricted to
// one container when `container_id` is given (prefix match, as docker prints short ids).
std::vector<ProcessInfo> gpu_processes(const SystemRoots& roots,
                                       const std::optional<std::string>& container_id = std::nullopt);

// Host pid of the process that sees itself as `container_pid` inside the container whose id starts
// with `container_id` (or inside any container when empty). nullopt when none or ambiguous.
std::optional<int> host_pid_of(const SystemRoots& roots, int container_pid, const std::string& container_id);

// Parent pid of `pid` (nullopt when it is gone); is `pid` `ancestor` or one of its descendants?
std::optional<int> parent_pid(const SystemRoots& roots, int pid);
bool descends_from(const SystemRoots& roots, int pid, int ancestor);

// The innermost pid (what the process itself and its logs print) of a host pid.
std::optional<int> container_pid_of(const SystemRoots& roots, int host_pid);

}  // namespace gpreempt::discovery
