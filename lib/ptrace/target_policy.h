// Which processes gpreempt refuses to ptrace, whoever asks (docs/security.md, "ptrace").
//
// gpreemptd holds CAP_SYS_PTRACE, which lets it past every check the kernel's ptrace_may_access
// makes for an ordinary debugger: a target whose real, effective and saved uids (or gids) differ
// (a set-user-ID program), and one that is not dumpable (PR_SET_DUMPABLE 0, or a setuid or
// file-capability exec: the kernel then gives its /proc/PID files to root, task_dump_owner). Those
// processes asked not to be debugged; the daemon honours that itself. It also never takes the
// node's init (pid 1: stopping it stops the node) nor the init of a pid namespace (a container's
// reaper, whose stop leaves the container's orphans unreaped and its signals undelivered).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpreempt::ptrace {

// "" when `pid` may be traced; else why not. `status_text` is /proc/PID/status, `status_owner` the
// owner of that file (root for a non-dumpable process; its directory keeps the euid).
std::string ptrace_refusal(int pid, std::string_view status_text, std::uint32_t status_owner);

}  // namespace gpreempt::ptrace
