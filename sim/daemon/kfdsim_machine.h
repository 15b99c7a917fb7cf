// kfdsim's machine: the programs it starts (kfdsimd, and the shim it preloads into a command), the
// environment it gives them, and starting and stopping the daemon of a machine directory. Shared
// by kfdsim's commands (kfdsim_main.cpp) and `kfdsim run` (kfdsim_run.h).
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/daemon/machine_options.h"
#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::kfdsim {

// kfdsim's exit codes (run: the command's own).
constexpr int kOk = 0, kFailed = 1, kUsage = 2;

// --json output: one document with "schema_version" (docs/json.md).
void print_document(const nlohmann::json& j, int indent = 2);
const char* env(const char* name);
// kfdsimd beside this kfdsim (KFDSIM_DAEMON overrides).
std::string daemon_exe();
// The shim a command is started with (KFDSIM_SHIM overrides), and the LD_PRELOAD list that loads it.
std::string shim_library();
std::string preload_list(const std::string& shim);
// The dynamic loader splits LD_PRELOAD at spaces and colons: true when `path` would be split.
bool splits_preload(const std::string& path);
std::string preload_split_advice(const std::string& shim);
void no_daemon(const protocol::MachinePaths& paths, int error);
// The daemon refused `what` (EPERM): only the owner of a shared machine and root may do it.
void not_admin(const protocol::MachinePaths& paths, const char* what);
// This process's environment with `overrides` ("KEY=value"; "KEY=" removes KEY) applied; the
// strings live in `storage`.
std::vector<char*> child_env(const std::vector<std::string>& overrides, std::vector<std::string>& storage);
// Starts a persistent daemon for `paths` unless one answers already. kOk / kFailed.
// `owner` (kfdsim run, kfdsim start --owner-pid): the daemon stops when that process ends;
// `owned_dir` (kfdsim run): it then also removes the private directory.
int start_daemon(const protocol::MachinePaths& paths, const daemon::MachineOptions& m, bool* already,
                 pid_t owner = 0, bool owned_dir = false);
// Asks the daemon to stop and waits (up to 10 s) until its process has exited.
int stop_daemon(const protocol::MachinePaths& paths, bool quiet, bool json = false);

}  // namespace gpreempt::sim::kfdsim
