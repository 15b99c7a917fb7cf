// Who may do what on a simulated machine, as on a real node: /dev/kfd is open to every user (mode
// 0666 or the render group), but every KFD call acts on the calling process — no user reaches
// another user's process through the device (the debugger calls need ptrace, which the host's
// kernel itself checks) — and what only root sees on a real node (debugfs, unloading the driver)
// is the machine owner's here.
//
// A machine is private to its owner unless it is shared (`kfdsim start --shared`): then its
// directory is readable and its socket connectable by every uid, and nobody but the owner may
// replace a file of it.
#pragma once

#include <sys/types.h>

#include <string>

#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::daemon {

// Opens the machine to every uid (after its socket is bound and its files materialised): the
// directory 0755, the socket 0666, the start-up lock 0644 (made if missing: a client of another
// uid takes it read-only), debugfs 0700 (root-only on a real node). Throws std::system_error
// naming the path that could not be changed.
void share_machine(const protocol::MachinePaths& paths);

// "" when a peer of `peer_uid` may make KFD calls as process `pid`: the process is the peer's
// own user's (the shim of a forked child may still use its parent's connection); else why not.
std::string may_act_as(uid_t peer_uid, int pid);

// Whether a peer may inspect every process's queues or stop the machine: the machine's owner
// (the simulated root) and root.
bool is_machine_admin(uid_t peer_uid);

}  // namespace gpreempt::sim::daemon
