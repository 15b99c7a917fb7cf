// Finding GPU processes on a live system: who has /dev/kfd open, their KFD queues from per-process
// sysfs, their command line and container, and the container <-> host pid mapping (NSpid).
// This is the I/O side of lib/discovery; every path is taken from a `SystemRoots` so tests (and
// the simulator's shim) can point it at another tree.
#pragma once

#include <cstdint>
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
// No such directory (no KFD): none. When it exists but cannot be listed (out of descriptors, ...)
// an empty answer would say that every GPU process exited: with `error`, *error is that errno
// (0 when listed) and the answer is to be ignored; without, it throws std::system_error. A
// caller that may run out of descriptors passes `error`: catching an exception needs none, but
// an UBSan build checks the exception's type through a pipe, which then fails.
std::vector<int> kfd_sysfs_processes(const SystemRoots& roots, int* error = nullptr);

// Queues of one process from <kfd_sysfs>/proc/<pid>/queues/<id>/{type,gpuid,size}; a queue whose
// files are unreadable or malformed is left out and described in `problems`.
std::vector<KnownQueue> sysfs_queues(const SystemRoots& roots, int pid, std::vector<std::string>* problems = nullptr);

// Which GPU each queue of one process is on, from <kfd_sysfs>/proc/<pid>/queues/<id>/gpuid alone:
// one read per queue where sysfs_queues makes three, for callers that follow only the GPUs a
// process uses (gpreemptd's discovery; under the simulator every sysfs read is a round trip to
// kfdsimd). Ascending queue ids; a queue that vanished while it was read is left out, one whose
// gpuid is malformed too, described in `problems`. No directory (no such KFD process): empty.
// When the files are there but could not be read (EMFILE, EACCES, ...) a partial answer would say
// queues vanished that did not: with `error`, *error is that errno (0 when read) and the answer is
// to be ignored; without, it throws std::system_error.
struct QueueGpu {
  std::uint32_t queue_id = 0;
  std::uint32_t gpu_id = 0;
};
std::vector<QueueGpu> sysfs_queue_gpus(const SystemRoots& roots, int pid,
                                       std::vector<std::string>* problems = nullptr,
                                       int* error = nullptr);

// The same files, raw, for callers that want the kernel's numbers (the C ABI's
// gpreempt_sysfs_queue) and an error rather than a partial answer.
struct SysfsQueue {
  std::uint32_t queue_id = 0;
  std::uint32_t gpu_id = 0;
  std::uint32_t type = 0;  // kernel-internal enum; sysfs_queue_type_name() (proc_parse.h) names it
  std::uint64_t size = 0;  // ring size in bytes
};
// Queues of `pid`, sorted by id. Readable without root and without a debug session, so a process
// can list its own queues and anyone can see which queue ids a pid owns. Throws gpreempt::Error
// (ESRCH) when the pid has no KFD process directory (it never opened /dev/kfd, or it exited), and
// Error(EIO) naming the file when a value file is malformed. A queue destroyed while it is read is
// left out.
std::vector<SysfsQueue> read_process_queues(int pid, const SystemRoots& roots = {});

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
// The start time of `pid` (with the pid, its identity) while it runs: nullopt when it is gone, a
// zombie or exiting (parse_stat_alive). What every check "does this pid still name that process?"
// reads.
std::optional<std::uint64_t> live_start_time(const SystemRoots& roots, int pid);
bool descends_from(const SystemRoots& roots, int pid, int ancestor);

// The innermost pid (what the process itself and its logs print) of a host pid.
std::optional<int> container_pid_of(const SystemRoots& roots, int host_pid);

}  // namespace gpreempt::discovery
