// `kfdsim run -- COMMAND`: a command on a private simulated machine.
//
// `kfdsim run` stands between its caller and the command: SIGTERM and SIGHUP (`timeout`, a closed
// terminal, a job scheduler), and a SIGINT sent to run alone, go on to the command (the terminal's
// Ctrl-C reaches the whole foreground group, the command included, by itself). Once the command has
// exited, whatever it left running (a server a script started in the background) is ended, then
// run stops its machine and removes its directory. Killed outright (SIGKILL), run cleans up
// nothing: the command gets SIGTERM from the kernel (PR_SET_PDEATHSIG), the daemon run started
// follows run's pid (--owner-pid), then stops and removes the private directory by itself, and
// what the command left running loses its device without starting another (KFDSIM_AUTOSTART=0).
// A signal that comes before the command exists ends run before it.
#pragma once

#include <string>
#include <vector>

#include "sim/daemon/machine_options.h"
#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::kfdsim {

// Runs `command` on the machine of `paths` (a private one made in $TMPDIR when `private_dir`,
// removed afterwards unless `keep`); returns the command's exit code (128+signal if killed), or
// kFailed / kUsage / 127 when it could not be run.
int run_command(protocol::MachinePaths paths, bool private_dir, const daemon::MachineOptions& m,
                std::vector<std::string> command, bool keep);

}  // namespace gpreempt::sim::kfdsim
