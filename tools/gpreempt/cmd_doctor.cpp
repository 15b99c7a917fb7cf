// `gpreempt doctor`: is this machine ready for gpreemptd? One PASS/WARN/FAIL line per check
// (lib/doctor), each non-PASS with its fix; exit 1 when anything FAILs.
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "cli.h"
#include "client/connection.h"
#include "client/protocol.h"
#include "doctor/config_trust.h"
#include "doctor/doctor.h"

namespace gpreempt::cli {

namespace {

struct DoctorOptions {
  std::string device = "/dev/kfd";
  std::string root = "/";
  std::string config = doctor::kDefaultConfigPath;
  std::string socket = client::default_socket_path();
};

// The running gpreemptd's status, for config_trust: what it trusts now, not what the file says.
doctor::RunningDaemon ask_daemon(const std::string& socket) {
  doctor::RunningDaemon d;
  d.socket = socket;
  try {
    d.status = client::Connection::connect(socket, std::chrono::seconds(2)).status();
  } catch (const std::exception& e) {
    d.error = e.what();
  }
  return d;
}

// Under `kfdsim run` (or LD_PRELOAD=$(kfdsim shim)): the KFD paths are the simulator's.
bool on_simulator() {
  const char* dir = std::getenv("KFDSIM_DIR");
  const char* preload = std::getenv("LD_PRELOAD");
  return dir && *dir && preload && std::string_view(preload).find("libkfdshim") != std::string_view::npos;
}

const char* colour_of(doctor::Status s) {
  switch (s) {
    case doctor::Status::kPass: return "\033[32m";
    case doctor::Status::kWarn: return "\033[33m";
    case doctor::Status::kFail: return "\033[31m";
    case doctor::Status::kSkip: return "\033[2m";
  }
  return "";
}

std::string lower(const char* s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c - 'A' + 'a');
  return out;
}

void run_doctor(const Globals& g, const DoctorOptions& o) {
  doctor::DoctorInputs in{doctor::SystemFiles(o.root), doctor::probe_kfd(o.device), on_simulator(),
                          static_cast<int>(::getpid()), o.config, std::nullopt};
  if (!o.socket.empty()) in.daemon = ask_daemon(o.socket);
  const auto results = doctor::run_checks(in);

  std::size_t counts[4] = {0, 0, 0, 0};
  for (const auto& r : results) ++counts[static_cast<int>(r.status)];
  const bool failed = doctor::any_failed(results);

  std::ostringstream out;
  out << "gpreempt doctor: is this machine ready for gpreemptd?\n"
      << "Minimum stack: " << doctor::kMinimumStack << ", a GPU under the hardware scheduler (HWS).\n";
  if (in.simulated) out << "Simulated machine (kfdsim): the KFD answers come from the simulator.\n";
  out << "\n";
  std::size_t id_width = 0;
  for (const auto& r : results) id_width = std::max(id_width, r.id.size());
  for (const auto& r : results) {
    const char* status = doctor::to_string(r.status);
    if (g.color)
      out << colour_of(r.status) << status << "\033[0m";
    else
      out << status;
    out << "  " << r.id << std::string(id_width - r.id.size() + 2, ' ') << r.summary << "\n";
    if (!r.fix.empty()) out << std::string(6 + id_width + 2, ' ') << "fix: " << r.fix << "\n";
  }
  out << "\n"
      << counts[0] << " pass, " << counts[1] << " warn, " << counts[2] << " fail, " << counts[3]
      << " skipped: "
      << (failed ? "NOT ready, fix the FAIL lines above."
                 : counts[1] ? "ready; read the WARN lines." : "ready.")
      << "\n";

  nlohmann::ordered_json j;
  j["minimum_stack"] = doctor::kMinimumStack;
  j["simulated"] = in.simulated;
  j["ok"] = !failed;
  j["counts"] = {{"pass", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}, {"skip", counts[3]}};
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    nlohmann::ordered_json c;
    c["id"] = r.id;
    c["status"] = lower(doctor::to_string(r.status));
    c["summary"] = r.summary;
    c["fix"] = r.fix.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.fix);
    c["pid"] = r.pid ? nlohmann::ordered_json(*r.pid) : nlohmann::ordered_json();
    j["checks"].push_back(std::move(c));
  }
  const std::string problem = std::to_string(counts[2]) + " check(s) failed";
  if (failed) j["error"] = json_conventions::error_object("failed", std::nullopt, problem);
  if (g.json)
    print_json(j);
  else
    std::cout << out.str();
  std::cout.flush();
  if (failed) exit_partial("doctor: " + problem);
}

}  // namespace

void register_doctor_commands(CLI::App& app, Globals& globals) {
  auto opts = std::make_shared<DoctorOptions>();
  CLI::App* cmd = add_command(
      app, globals, "doctor", "Check that this machine can run gpreemptd, and say how to fix what it cannot",
      "One line per check: PASS, WARN (works, with a caveat) or FAIL, each with its fix:\n"
      "  kfd_device, kfd_ioctl_version (>= 1.13), debug_trap, scheduler (HWS vs MES,\n"
      "  amdgpu.sched_policy), cwsr (amdgpu.cwsr_enable), queue_preemption_timeout, kernel\n"
      "  (>= 6.5 or amdgpu-dkms), ptrace_scope (Yama), cap_sys_ptrace, pid_namespace (the host's),\n"
      "  debugfs (kfd/mqds readable), and rocm_user_space for every GPU process (ROCm >= 5.7,\n"
      "  read from the libhsa-runtime64 it maps; processes in containers are named as such),\n"
      "  and config_trust: what gpreemptd's config trusts (docs/security.md) — the running\n"
      "  daemon's settings when it answers on --socket (as root or a control_group member),\n"
      "  warning when the file has changed since it was loaded; else the --config file's.\n"
      "Minimum stack: Linux >= 6.5 (or AMD's amdgpu-dkms driver) with ROCm >= 5.7 user space.\n"
      "Run it as gpreemptd will run (root, or with CAP_SYS_PTRACE): the ptrace and debugfs checks\n"
      "look at the caller's privileges. docs/doctor.md explains every check.\n"
      "Examples:\n  sudo gpreempt doctor\n  gpreempt doctor --json | jq '.checks[] | select(.status != \"pass\")'\n"
      "  kfdsim run -- gpreempt doctor                (the simulated machine)\n"
      "Exit codes: 0 nothing failed (WARN lines allowed), 1 at least one FAIL, 2 usage.");
  cmd->add_option("--device", opts->device, "KFD device node")->capture_default_str();
  cmd->add_option("--config", opts->config,
                  "gpreemptd's config: config_trust reports what it trusts (single_tenant, rootless "
                  "roots, metrics address, control_group); '' leaves that check out")
      ->capture_default_str();
  cmd->add_option("--socket", opts->socket,
                  "gpreemptd's socket, asked for the settings in force (default $GPREEMPT_SOCKET, "
                  "else /run/gpreempt/gpreemptd.sock); '' reviews the --config file only")
      ->capture_default_str();
  cmd->add_option("--root", opts->root,
                  "Read /proc, /sys and debugfs under this directory (a copied or fake tree)")
      ->capture_default_str();
  cmd->callback([&globals, opts] { run_doctor(globals, *opts); });
}

}  // namespace gpreempt::cli
