// The one check every command that acts on `--pid P` makes before it acts (suspend, resume,
// queues, bench, map): P must be a GPU process with at least one KFD queue. The usual mistake is
// to name the launcher shell or the parent of a PyTorch worker, which has no KFD process; such a
// command would otherwise "succeed" on 0 of 0 queues. The failure names the pid and its command,
// says why, and suggests the processes that do have /dev/kfd open, P's descendants first.
#pragma once

#include "cli.h"
#include "discovery/process_discovery.h"

namespace gpreempt::cli {

// Throws Failure (exit 1) when `pid` does not exist, has no KFD process, or has no queues. The
// Failure's JSON detail carries pid, reason ("no_such_process", "no_kfd_process", "no_queues")
// and the candidates.
void require_gpu_queues(int pid, const discovery::SystemRoots& roots = {});

// The same Failure for a pid whose queue list (however obtained) came back empty.
Failure no_queues_failure(int pid, const discovery::SystemRoots& roots = {});

}  // namespace gpreempt::cli
