// Pure parsers for the /proc and per-process KFD sysfs files process discovery reads
// (process_discovery.h does the reading). Text in, values out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::discovery {

// "NSpid:" line of /proc/<pid>/status: the pid in every pid namespace, outermost (host view from
// where /proc is mounted) first, innermost (what the process sees as its own pid) last.
std::vector<int> parse_nspid(std::string_view status_text);

// Parent pid from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may hold spaces and ')').
std::optional<int> parse_stat_ppid(std::string_view stat_text);

// Start time from /proc/<pid>/stat (field 22, clock ticks since boot): with the pid, what tells a
// process from a later one that reuses its pid (gpreemptd's sched::ProcessKey).
std::optional<std::uint64_t> parse_stat_start_time(std::string_view stat_text);

// Whether /proc/<pid>/stat describes a process that still runs: not a zombie or dead (state Z, X)
// and not exiting (PF_EXITING in its flags). An exiting process refuses PTRACE_SEIZE and its
// debug ops, and its queues and memory are going. false when the text cannot be parsed.
bool parse_stat_alive(std::string_view stat_text);

// /proc/<pid>/cmdline: NUL-separated arguments.
std::vector<std::string> parse_cmdline(std::string_view text);

// The container a cgroup path names, only where a container runtime, not a user, made the cgroup:
// the container's own component in the position each runtime's driver puts it (Docker, Podman,
// nerdctl, containerd, CRI-O, the kubelet; layouts in sched/cgroup_identity.h), under a top-level
// cgroup only root creates. A look-alike name elsewhere (`docker-<id>.scope` made by a user in
// their delegated subtree) is no container. Ids are >= 32 lowercase hex digits.
struct CgroupContainer {
  std::string id;
  // Under a user's own systemd (user@UID.service): rootless Podman or nerdctl, or anything that
  // user chose to name so; never to be taken for a rootful container of the same id.
  bool rootless = false;
};
std::optional<CgroupContainer> container_in_cgroup_path(std::string_view cgroup_path);

// Container id from /proc/<pid>/cgroup (or one path): the last rootful container any line names
// (container_in_cgroup_path); nullopt for processes in no container.
std::optional<std::string> container_id_from_cgroup(std::string_view cgroup_text);

// The three files of one per-process sysfs queue directory (`queues/<id>/{type,gpuid,size}`,
// docs/kfd-interface.md#per-process-queues): the type code and gpu id, and the ring size when
// `size` is a number. nullopt when type or gpuid is not a decimal number in range (a type code
// beyond int, a gpu id beyond 32 bits).
struct SysfsQueueFiles {
  int type = 0;
  std::uint32_t gpu_id = 0;
  std::optional<std::uint64_t> size;
};
std::optional<SysfsQueueFiles> parse_sysfs_queue(std::string_view type_text, std::string_view gpuid_text,
                                                 std::string_view size_text);

// A queue's `gpuid` file alone, by parse_sysfs_queue's rule: nullopt unless an unsigned decimal
// number within 32 bits.
std::optional<std::uint32_t> parse_sysfs_gpu_id(std::string_view gpuid_text);

// A per-process sysfs value file (`queues/<id>/size`, `type`, `gpuid`: "%llu"/"%d"/"%u" with no
// trailing newline on the real kernel; a newline is tolerated), or a topology `gpu_id`. nullopt
// unless the text is an unsigned decimal number.
std::optional<std::uint64_t> parse_sysfs_number(std::string_view text);

// KFD's per-process sysfs queue type (`queues/<id>/type`), the kernel-internal enum kfd_queue_type
// (docs/kfd-interface.md#per-process-queues): 0 compute (PM4 and AQL alike), 1 sdma, 2 hiq;
// "sdma_xgmi" is 3 on kernels without DIQ and 4 on older ones, whose 3 was the DIQ of the legacy
// debugger (never a queue of a process on kernels with the debugger API); SDMA_BY_ENG_ID queues
// become sdma or sdma_xgmi when created. Other codes: "type <n>".
std::string sysfs_queue_type_name(std::int64_t type_code);

}  // namespace gpreempt::discovery
