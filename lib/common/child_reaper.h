// Children that must not outlive the program that started them. A program (not a library: this
// replaces signal handlers) calls kill_children_on_termination() once; then SIGTERM, SIGHUP or
// SIGINT first kills (SIGKILL) every child recorded with track_child, then ends the program by the
// same signal, as if it had not been caught. Without it, `gpreempt demo` or `gpreempt experiment`
// stopped by `timeout` or a closed terminal left their workloads or models running, a simulated
// one spinning forever on a GPU that was gone.
#pragma once

#include <sys/types.h>

namespace gpreempt {

// Records `target` (a pid, or -pgid for a whole process group) until untrack_child. At most 256
// targets at a time; track_child returns false when the table is full (the target is then not
// killed on termination).
bool track_child(pid_t target);
void untrack_child(pid_t target);

// Installs the handlers for SIGTERM, SIGHUP and SIGINT, except for a signal this process ignores.
void kill_children_on_termination();

}  // namespace gpreempt
