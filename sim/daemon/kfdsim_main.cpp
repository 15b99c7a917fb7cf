// kfdsim: start, stop, inspect a simulated AMD GPU machine, and run unmodified programs on it.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/json_conventions.h"
#include "cli_common.h"
#include "sim/daemon/kfdsim_machine.h"
#include "sim/daemon/kfdsim_run.h"
#include "sim/daemon/machine_options.h"
#include "sim/device/device_profile.h"
#include "sim/protocol/machine_paths.h"
#include "sim/protocol/gpu_stats_query.h"
#include "sim/protocol/query.h"

namespace fs = std::filesystem;
using namespace gpreempt::sim;
using protocol::Op;
using namespace gpreempt::sim::kfdsim;

namespace {

namespace jc = gpreempt::json_conventions;

int print_status(const protocol::MachinePaths& paths, bool json) {
  auto r = protocol::query(paths.socket, Op::kStatus);
  if (r.error) {
    if (json) {
      print_document({{"running", false}, {"socket", paths.socket}});
    } else {
      std::cout << "not running (" << paths.socket << ")\n";
    }
    return kFailed;
  }
  auto j = nlohmann::json::parse(r.payload);
  if (json) {
    j["running"] = true;
    print_document(j);
    return kOk;
  }
  std::cout << "machine    " << j["dir"].get<std::string>() << "\n"
            << "daemon     pid " << j["daemon_pid"] << (j["persistent"].get<bool>() ? " (persistent)" : " (exits after last client)") << "\n"
            << "device     " << j["marketing_name"].get<std::string>() << " (" << j["profile"].get<std::string>() << ", "
            << j["gfx_arch"].get<std::string>() << ") x " << j["gpus"].size() << "\n"
            << "kfd        " << j["kfd_version"].get<std::string>() << ", sched_policy " << j["sched_policy"]
            << ", hardware " << j["hardware"].get<std::string>() << "\n";
  for (const auto& g : j["gpus"])
    std::cout << "gpu        gpu_id " << g["gpu_id"] << ", renderD" << g["drm_render_minor"] << "\n";
  std::cout << "clients    " << j["clients"].size() << " process(es)\n"
            << "queues     " << j["queues"] << "\n";
  return kOk;
}

int print_queues(const protocol::MachinePaths& paths, bool json) {
  auto r = protocol::query(paths.socket, Op::kQueues);
  if (r.error) {
    no_daemon(paths, r.error);
    return kFailed;
  }
  if (r.ret == -EPERM) {
    not_admin(paths, "list every process's queues");
    return kFailed;
  }
  auto a = nlohmann::json::parse(r.payload);
  static const char* types[] = {"compute", "sdma", "compute_aql", "sdma_xgmi", "sdma_by_eng"};
  if (json) {
    // The names every gpreempt document uses: "compute" for AQL and PM4 alike (as sysfs and
    // debugfs say), "aql" for the distinction; addresses as "0x…".
    nlohmann::json out = nlohmann::json::array();
    for (const auto& q : a) {
      const unsigned type = q["type"].get<unsigned>();
      out.push_back({{"pid", q["pid"]},
                     {"queue_id", q["queue_id"]},
                     {"gpu_id", q["gpu_id"]},
                     {"type", type == 2 ? "compute" : type < 5 ? types[type] : "unknown"},
                     {"aql", type == 2},
                     {"ring_base", jc::address(q["ring_base"].get<uint64_t>())},
                     {"ring_size_bytes", q["ring_size"]},
                     {"rptr_address", jc::address(q["read_pointer_address"].get<uint64_t>())},
                     {"wptr_address", jc::address(q["write_pointer_address"].get<uint64_t>())},
                     {"priority", q["priority"]},
                     {"suspended", q["suspended"]}});
    }
    print_document({{"queues", out}});
    return kOk;
  }
  std::printf("%-8s %-5s %-7s %-12s %-18s %-9s %-4s %s\n", "PID", "QID", "GPU", "TYPE", "RING_BASE",
              "RING_SIZE", "PRIO", "STATE");
  for (const auto& q : a) {
    unsigned type = q["type"].get<unsigned>();
    std::printf("%-8d %-5u %-7x %-12s 0x%016llx %-9llu %-4u %s\n", q["pid"].get<int>(),
                q["queue_id"].get<unsigned>(), q["gpu_id"].get<unsigned>(), type < 5 ? types[type] : "?",
                static_cast<unsigned long long>(q["ring_base"].get<uint64_t>()),
                static_cast<unsigned long long>(q["ring_size"].get<uint64_t>()), q["priority"].get<unsigned>(),
                q["suspended"].get<bool>() ? "suspended" : "runnable");
  }
  if (a.empty()) std::printf("(no queues)\n");
  return kOk;
}

int print_gpu_stats(const protocol::MachinePaths& paths, uint64_t since, bool json) {
  auto r = protocol::fetch_gpu_stats(paths.socket, since);
  if (r.error == -ENODEV) {
    std::fprintf(stderr, "kfdsim: the machine at %s runs --hardware instant, which records nothing "
                 "(start it with --hardware gpu)\n", paths.dir.c_str());
    return kFailed;
  }
  if (r.error == -EPERM) {
    not_admin(paths, "read the GPU's records");
    return kFailed;
  }
  if (r.error) {
    no_daemon(paths, r.error);
    return kFailed;
  }
  const auto& j = r.stats;
  if (json) {
    print_document(j, 1);
    return kOk;
  }
  auto us = [](const nlohmann::json& ns) -> std::string {
    if (!ns.is_number()) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", ns.get<double>() / 1000.0);
    return b;
  };
  std::printf("profile %s, simulated time %.3f s\n", j["profile"].get<std::string>().c_str(),
              j["now_ns"].get<double>() / 1e9);
  for (const auto& g : j["gpus"]) {
    const auto& c = g["counters"];
    std::printf("\ngpu %u (%x): %llu kernels, %llu runlist updates (%llu suspends, %llu resumes), %llu waves saved\n",
                g["gpu_id"].get<unsigned>(), g["gpu_id"].get<unsigned>(), c["kernels_completed"].get<unsigned long long>(),
                c["runlist_updates"].get<unsigned long long>(), c["suspends"].get<unsigned long long>(),
                c["resumes"].get<unsigned long long>(), c["waves_saved"].get<unsigned long long>());
    if (g["runlist"].empty()) {
      std::printf("  (no runlist records after seq %llu)\n", static_cast<unsigned long long>(since));
      continue;
    }
    std::printf("  %-6s %-8s %-7s %12s %10s %10s %12s %7s\n", "SEQ", "KIND", "GRACE", "STOP_US", "SAVE_US",
                "RESTORE_US", "ROUNDTRIP_US", "RESULT");
    for (const auto& rec : g["runlist"]) {
      // 0xffffffff asks for the driver's default grace period.
      const unsigned grace = rec["grace_kclk"].get<unsigned>();
      const std::string grace_text = grace == 0xffffffffu ? "default" : std::to_string(grace);
      std::printf("  %-6llu %-8s %-7s %12s %10s %10s %12s %7d\n", rec["seq"].get<unsigned long long>(),
                  rec["kind"].get<std::string>().c_str(), grace_text.c_str(),
                  us(rec["stop_latency_ns"]).c_str(), us(rec["save_ns"]).c_str(), us(rec["restore_ns"]).c_str(),
                  us(rec["round_trip_ns"]).c_str(), rec["result"].get<int>());
    }
  }
  return kOk;
}

int show_files(const protocol::MachinePaths& paths, const std::string& which, bool json) {
  auto r = protocol::query(paths.socket, Op::kRefreshFiles);
  if (r.error) {
    no_daemon(paths, r.error);
    return kFailed;
  }
  fs::path root = paths.root();
  if (!which.empty()) {
    auto g = protocol::classify_path(protocol::normalize_path(which), root.string());
    if (g.kind != protocol::GuestPathKind::kFile) {
      std::fprintf(stderr, "kfdsim: %s is not a simulated sysfs/debugfs path (/sys/class/kfd/…, "
                   "/sys/devices/virtual/kfd/…, /sys/kernel/debug/kfd/…)\n", which.c_str());
      return kUsage;
    }
    std::ifstream in(g.host, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "kfdsim: %s: no such file on the simulated machine\n", which.c_str());
      return kFailed;
    }
    std::cout << in.rdbuf();
    return kOk;
  }
  nlohmann::json a = nlohmann::json::array();
  // Symlinks are followed (/sys/class/kfd/kfd is one), but sysfs has cycles as the kernel's does
  // (/sys/class/drm/card0/device/drm/card0 is card0 again): a directory that is one of the
  // directories it is listed under is not entered again.
  std::vector<fs::path> open_dirs;  // canonical, by depth
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::follow_directory_symlink);
       it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory()) {
      std::error_code ec;
      const fs::path real = fs::canonical(it->path(), ec);
      open_dirs.resize(static_cast<std::size_t>(it.depth()));
      if (ec || std::find(open_dirs.begin(), open_dirs.end(), real) != open_dirs.end()) {
        it.disable_recursion_pending();
        continue;
      }
      open_dirs.push_back(real);
      continue;
    }
    if (!it->is_regular_file()) continue;
    // Lexically: relative() would resolve /sys/class/kfd/kfd to the /sys/devices path it links to.
    std::string guest = "/" + it->path().lexically_relative(root).string();
    // /sys/devices is shown via /sys/class; dev/ holds the device nodes' empty placeholders.
    if (guest.rfind("/sys/devices/", 0) == 0 || guest.rfind("/dev/", 0) == 0) continue;
    a.push_back({{"path", guest}, {"size_bytes", it->file_size()}});
  }
  std::sort(a.begin(), a.end(), [](const auto& x, const auto& y) { return x["path"] < y["path"]; });
  if (json) {
    print_document({{"files", a}});
  } else {
    for (const auto& f : a) std::printf("%8llu  %s\n", static_cast<unsigned long long>(f["size_bytes"].get<uint64_t>()),
                                        f["path"].get<std::string>().c_str());
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  protocol::MachinePaths paths = protocol::machine_paths(env, getuid());
  daemon::MachineOptions machine;
  if (std::string e = daemon::apply_environment(machine, env); !e.empty()) {
    std::fprintf(stderr, "kfdsim: %s\n", e.c_str());
    return kUsage;
  }

  CLI::App app{
      "kfdsim: a simulated AMD Instinct machine (KFD /dev/kfd, its sysfs and debugfs) for programs "
      "that have no GPU.\n\n"
      "  kfdsim run -- ./my_program args       run a program on a private simulated machine\n"
      "  kfdsim run --profile mi300x --gpus 2 -- python3 tool.py\n"
      "  kfdsim start; LD_PRELOAD=$(kfdsim shim) prog; kfdsim queues; kfdsim stop\n\n"
      "A machine is a directory ($KFDSIM_DIR, default $XDG_RUNTIME_DIR/kfdsim or "
      "/tmp/kfdsim-<uid>) holding the daemon's socket (kfdsim.sock), its log (kfdsimd.log) and "
      "the materialised files (root/). Programs reach it through the LD_PRELOAD shim "
      "libkfdshim.so, which starts a "
      "daemon on demand (exiting after its last client) if none runs. Defaults for the machine "
      "options come from KFDSIM_PROFILE, KFDSIM_GPUS, KFDSIM_KFD_MINOR, KFDSIM_SCHED_POLICY, "
      "KFDSIM_KERNEL_HZ, KFDSIM_HARDWARE, KFDSIM_CPU_NODES."};
  app.footer(
      "Examples:\n"
      "  kfdsim run -- gpreempt info                     the simulated GPU as gpreempt sees it\n"
      "  kfdsim run --hardware instant -- ./test         runlist changes complete at once\n"
      "  kfdsim run --kfd-minor 12 -- gpreempt info      a KFD older than the debugger API (1.13)\n"
      "  kfdsim run --sched-policy 2 -- gpreempt info    no hardware scheduler: no suspend/resume\n"
      "  kfdsim run -- sh -c 'gpreempt-workload offline --preset cnn --duration 5 & sleep 1;\n"
      "                       gpreempt suspend --pid $! --for 500'\n"
      "  kfdsim start && kfdsim files /sys/kernel/debug/kfd/mqds && kfdsim stop\n"
      "  sudo kfdsim --dir /run/kfdsim start --shared    a node every user's programs share:\n"
      "    KFDSIM_DIR=/run/kfdsim LD_PRELOAD=$(kfdsim shim) ./prog    (as any user)\n"
      "Exit codes: run: the command's (128+signal if killed); others: 0 ok, 1 failure, 2 usage.");
  app.require_subcommand(1);
  gpreempt::cli_common::add_version_flag(app, "kfdsim");
  std::string dir;
  app.add_option("--dir", dir, "machine directory (default $KFDSIM_DIR)");

  auto add_machine_options = [&](CLI::App* sub) {
    std::vector<std::string> names = profile_names();
    sub->add_option("--profile", machine.profile, "device profile")
        ->check(CLI::IsMember(names))
        ->capture_default_str();
    sub->add_option("--gpus", machine.gpus, "number of GPUs (0 = as in the captured machine)")
        ->capture_default_str();
    sub->add_option("--kfd-minor", machine.kfd_minor,
                    "KFD ioctl minor version GET_VERSION reports (e.g. 12 to test version gates)")
        ->capture_default_str();
    sub->add_option("--sched-policy", machine.sched_policy,
                    "amdgpu.sched_policy: 0 HWS, 1 HWS without oversubscription, 2 no HWS")
        ->check(gpreempt::cli_common::in_range(0, 2))
        ->capture_default_str();
    sub->add_option("--kernel-hz", machine.kernel_hz,
                    "CONFIG_HZ of the simulated kernel: a timed WAIT_EVENTS sleeps and writes back "
                    "whole jiffies of it (Debian's kernel: 250)")
        ->check(CLI::IsMember(gpreempt::sim::daemon::kKernelHzChoices))
        ->capture_default_str();
    sub->add_option("--hardware", machine.hardware,
                    "GPU model behind the KFD: gpu (the timing model of sim/gpu, which executes the "
                    "AQL packets; GPREEMPT_SIM_* settings) or instant (runlist changes complete at "
                    "once, packets never execute)")
        ->capture_default_str();
    sub->add_option("--cpu-nodes", machine.cpu_nodes,
                    "topology CPU nodes: 'host' describes this host (needed by libhsakmt/ROCr), "
                    "'profile' the captured machine (to compare files with real captures)")
        ->check(CLI::IsMember({"host", "profile"}))
        ->capture_default_str();
    sub->add_flag("--shared", machine.shared,
                  "let every uid use the machine, as every user may open a real node's /dev/kfd "
                  "(set KFDSIM_DIR to its directory): KFD calls still act only on the caller's own "
                  "processes (the debugger calls need ptrace, as on a real node); queues, stats "
                  "and stop stay the owner's and root's");
  };
  bool json = false;
  auto* start = app.add_subcommand("start", "start a persistent simulated machine (idempotent)");
  add_machine_options(start);
  start->add_flag("--json", json, "machine-readable output (the status after starting)");
  int owner_pid = 0;
  start->add_option("--owner-pid", owner_pid,
                    "stop the machine when process PID ends, however it ends (a test harness passes "
                    "its own pid, so that a crashed test leaves no machine running); applies to a "
                    "machine this start creates, not to one already running")
      ->check(CLI::PositiveNumber);
  auto* stop = app.add_subcommand("stop", "stop the machine's daemon (its processes lose the device)");
  stop->add_flag("--json", json, "machine-readable output");
  auto* status = app.add_subcommand("status", "show the machine: profile, GPUs, KFD version, clients");
  status->add_flag("--json", json, "machine-readable output");
  auto* queues = app.add_subcommand("queues", "list every queue of every process, suspended or not");
  queues->add_flag("--json", json, "machine-readable output");
  uint64_t since = 0;
  auto* stats = app.add_subcommand(
      "stats", "the simulated GPU's records: counters, and every suspend/resume/runlist update with "
               "when the queues stopped, the CWSR save and restore costs and the round trip (simulated time)");
  stats->add_option("--since", since, "only runlist records with a larger seq (a mark taken earlier)");
  stats->add_flag("--json", json, "machine-readable output (what tools read)");
  std::string which;
  auto* files = app.add_subcommand("files", "list the simulated sysfs/debugfs files, or print one");
  files->add_option("path", which, "a guest path, e.g. /sys/kernel/debug/kfd/mqds");
  files->add_flag("--json", json, "machine-readable output");
  app.add_subcommand("shim", "print the path of libkfdshim.so (for LD_PRELOAD)");
  std::vector<std::string> command;
  bool keep = false;
  auto* run = app.add_subcommand("run", "run COMMAND on a private simulated machine, then remove it; "
                                        "exits with COMMAND's exit code (128+signal if killed). SIGTERM and "
                                        "SIGHUP are passed on to COMMAND; the machine is removed all the same. "
                                        "Should kfdsim itself be killed (SIGKILL), COMMAND gets SIGTERM and "
                                        "the machine stops and removes itself");
  add_machine_options(run);
  run->add_flag("--keep", keep, "keep the machine directory (log, files) afterwards");
  run->add_option("command", command, "the program and its arguments (after --)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is success; every other parse problem is a usage error (exit code 2).
    return app.exit(e) == 0 ? 0 : 2;
  }

  bool explicit_dir = !dir.empty();
  if (explicit_dir) {
    paths.dir = protocol::normalize_dir(fs::absolute(dir).string());
    paths.socket = paths.dir + "/kfdsim.sock";
  }
  try {
    if (*run) return run_command(paths, !explicit_dir, machine, command, keep);
    if (*start) {
      (void)make_profile(machine.profile, machine.gpus);  // reject bad options before forking
      if (owner_pid > 0 && kill(owner_pid, 0) != 0 && errno == ESRCH) {
        std::fprintf(stderr, "kfdsim start: --owner-pid %d: no such process\n", owner_pid);
        return kUsage;
      }
      bool already = false;
      if (start_daemon(paths, machine, &already, owner_pid) != kOk) return kFailed;
      if (already && owner_pid > 0)
        std::fprintf(stderr, "kfdsim start: a machine already runs at %s; it does not follow --owner-pid %d\n",
                     paths.dir.c_str(), owner_pid);
      if (already && !json) std::printf("already running: ");
      return print_status(paths, json);
    }
    if (*stop) return stop_daemon(paths, false, json);
    if (*status) return print_status(paths, json);
    if (*queues) return print_queues(paths, json);
    if (*files) return show_files(paths, which, json);
    if (*stats) return print_gpu_stats(paths, since, json);
    if (app.got_subcommand("shim")) {
      const std::string shim = shim_library();
      if (splits_preload(shim)) std::fprintf(stderr, "kfdsim shim: warning: %s\n", preload_split_advice(shim).c_str());
      std::printf("%s\n", shim.c_str());
      return kOk;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kfdsim: %s\n", e.what());
    return kFailed;
  }
  return kUsage;
}
