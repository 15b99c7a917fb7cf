// kfdsim: start, stop, inspect a simulated AMD GPU machine, and run unmodified programs on it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "common/json_conventions.h"
#include "cli_common.h"
#include "sim/daemon/machine_options.h"
#include "sim/device/device_profile.h"
#include "sim/protocol/machine_paths.h"
#include "sim/protocol/messages.h"
#include "sim/protocol/gpu_stats_query.h"
#include "sim/protocol/query.h"
#include "sim/protocol/socket_io.h"

extern char** environ;

namespace fs = std::filesystem;
using namespace gpreempt::sim;
using protocol::Op;

namespace {

namespace jc = gpreempt::json_conventions;

// --json output: one document with "schema_version" (docs/json.md).
void print_document(const nlohmann::json& j, int indent = 2) {
  std::cout << jc::document(nlohmann::ordered_json(j)).dump(indent) << "\n";
}

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

const char* env(const char* n) { return std::getenv(n); }

fs::path exe_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : p.parent_path();
}

std::string daemon_exe() {
  if (const char* p = env(protocol::kEnvDaemon); p && *p) return p;
  return (exe_dir() / "kfdsimd").string();
}

// The build tree keeps programs in bin/ and libraries in lib/; an install keeps them in its bindir
// and libdir (lib/x86_64-linux-gnu under /usr on Debian): GPREEMPT_BIN_TO_LIB is that relative path.
std::string shim_library() {
  if (const char* p = env("KFDSIM_SHIM"); p && *p) return p;
  for (const char* rel : {"../lib", GPREEMPT_BIN_TO_LIB}) {
    auto candidate = fs::weakly_canonical(exe_dir() / rel / "libkfdshim.so");
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return fs::weakly_canonical(exe_dir() / GPREEMPT_BIN_TO_LIB / "libkfdshim.so").string();
}

// An instrumented shim loaded into a program ASan does not start first makes ASan refuse to run:
// its runtime leads the preload list in sanitizer builds (cmake/GpreemptSanitize.cmake).
std::string preload_list(const std::string& shim) {
#ifdef GPREEMPT_SANITIZER_PRELOAD
  std::string preload = std::string(GPREEMPT_SANITIZER_PRELOAD) + ":" + shim;
#else
  std::string preload = shim;
#endif
  if (const char* old = env("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  return preload;
}

// The dynamic loader splits LD_PRELOAD at spaces and colons: a shim path with either loads
// nothing (the loader only warns that the pieces cannot be preloaded).
bool splits_preload(const std::string& path) { return path.find_first_of(" :") != std::string::npos; }

std::string preload_split_advice(const std::string& shim) {
  return "the simulator's shim is at '" + shim +
         "', and the dynamic loader splits LD_PRELOAD at spaces and colons, so a program given that "
         "path would start without the shim (on the real /dev/kfd, or on none). Use a checkout or "
         "install whose path has neither, or point KFDSIM_SHIM at a link without them: ln -s '" +
         shim + "' /tmp/libkfdshim.so; KFDSIM_SHIM=/tmp/libkfdshim.so kfdsim run ...";
}

void no_daemon(const protocol::MachinePaths& paths, int error) {
  std::fprintf(stderr, "kfdsim: no simulated machine answers at %s (%s); start one with `kfdsim start`\n",
               paths.socket.c_str(), std::strerror(-error));
}

std::vector<char*> child_env(const std::vector<std::string>& overrides, std::vector<std::string>& storage) {
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& o : overrides)
      if (o.substr(0, o.find('=')) == key) replaced = true;
    if (!replaced) storage.push_back(kv);
  }
  for (const auto& o : overrides)
    if (o.back() != '=') storage.push_back(o);  // "KEY=" means: remove KEY
  std::vector<char*> out;
  for (auto& s : storage) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts a persistent daemon for `paths` unless one answers already. kOk / kFailed.
// `owner` (kfdsim run, kfdsim start --owner-pid): the daemon stops when that process ends;
// `owned_dir` (kfdsim run): it then also removes the private directory.
int start_daemon(const protocol::MachinePaths& paths, const daemon::MachineOptions& m, bool* already,
                 pid_t owner = 0, bool owned_dir = false) {
  std::error_code ec;
  fs::create_directories(paths.dir, ec);
  int lock = open(paths.lock().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) {
    std::fprintf(stderr, "kfdsim: cannot create %s: %s\n", paths.lock().c_str(), std::strerror(errno));
    return kFailed;
  }
  flock(lock, LOCK_EX);
  int probe = protocol::connect_unix(paths.socket);
  int rc = kOk;
  *already = probe >= 0;
  if (probe >= 0) {
    close(probe);
  } else {
    std::string exe = daemon_exe();
    std::vector<std::string> args = {exe, "--daemonize", "--persistent", "--dir=" + paths.dir,
                                     "--socket=" + paths.socket};
    for (auto& f : daemon::to_flags(m)) args.push_back(f);
    if (owner > 0) args.push_back("--owner-pid=" + std::to_string(owner));
    if (owner > 0 && owned_dir) args.push_back("--remove-dir-with-owner");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> storage;
    auto envp = child_env({"LD_PRELOAD="}, storage);
    pid_t pid;
    int err = posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), envp.data());
    int status = 0;
    if (err == 0) waitpid(pid, &status, 0);
    if (err != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "kfdsim: could not start %s%s%s\n", exe.c_str(), err ? ": " : "",
                   err ? std::strerror(err) : "");
      std::ifstream log(paths.log());
      std::string line, last;
      while (std::getline(log, line)) last = line;
      if (!last.empty()) std::fprintf(stderr, "kfdsim: %s says: %s\n", paths.log().c_str(), last.c_str());
      rc = kFailed;
    }
  }
  flock(lock, LOCK_UN);
  close(lock);
  return rc;
}

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
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::follow_directory_symlink);
       it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_regular_file()) continue;
    std::string guest = "/" + fs::relative(it->path(), root).string();
    if (guest.rfind("/sys/devices/", 0) == 0 || guest == "/dev/kfd") continue;  // shown via /sys/class
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

// How long stop waits for the daemon's process to exit after it has agreed to stop.
constexpr int kStopWaitMs = 10000;

// Asks the daemon to stop and waits until its process has exited: it writes its records
// (gpu-stats.json) and removes its socket on the way out, and a caller that removes the machine
// directory next (run, a script's rm -rf) must not race with those writes.
int stop_daemon(const protocol::MachinePaths& paths, bool quiet, bool json = false) {
  int pidfd = -1;
  int daemon_pid = 0;
  if (auto s = protocol::query(paths.socket, Op::kStatus); s.error == 0) {
    auto j = nlohmann::json::parse(s.payload, nullptr, false);
    if (j.is_object() && j.contains("daemon_pid") && j["daemon_pid"].is_number_integer()) {
      daemon_pid = j["daemon_pid"].get<int>();
      pidfd = static_cast<int>(syscall(SYS_pidfd_open, daemon_pid, 0));
    }
  }
  auto r = protocol::query(paths.socket, Op::kShutdown);
  if (pidfd >= 0) {
    pollfd exited{pidfd, POLLIN, 0};
    int n;
    while ((n = poll(&exited, 1, kStopWaitMs)) < 0 && errno == EINTR) {
    }
    if (r.error == 0 && n == 0)
      std::fprintf(stderr, "kfdsim: kfdsimd (pid %d) has not exited %d ms after agreeing to stop\n",
                   daemon_pid, kStopWaitMs);
    close(pidfd);
  }
  if (json) {
    print_document({{"was_running", r.error == 0}, {"running", false}, {"dir", paths.dir}});
  } else if (!quiet) {
    if (r.error)
      std::printf("not running (%s)\n", paths.socket.c_str());
    else
      std::printf("stopped %s\n", paths.dir.c_str());
  }
  return kOk;
}

// `kfdsim run` stands between its caller and the command: SIGTERM and SIGHUP (`timeout`, a closed
// terminal, a job scheduler), and a SIGINT sent to run alone, go on to the command (the terminal's
// Ctrl-C reaches the whole foreground group, the command included, by itself). Once the command has
// exited, whatever it left running (a server a script started in the background) is ended, then
// run stops its machine and removes its directory. Killed outright (SIGKILL), run cleans up
// nothing: the command gets SIGTERM from the kernel (PR_SET_PDEATHSIG), the daemon run started
// follows run's pid (--owner-pid), then stops and removes the private directory by itself, and
// what the command left running loses its device without starting another (KFDSIM_AUTOSTART=0).
// A signal that comes before the command exists ends run before it.
volatile sig_atomic_t g_command_pid = 0;
volatile sig_atomic_t g_signal_before_command = 0;

extern "C" void forward_to_command(int sig, siginfo_t* info, void*) {
  // The terminal's SIGINT (sent by the kernel) has reached the command already.
  if (sig == SIGINT && info && info->si_code == SI_KERNEL && g_command_pid > 0) return;
  if (g_command_pid > 0)
    kill(g_command_pid, sig);
  else
    g_signal_before_command = sig;
}

constexpr int kForwardedSignals[] = {SIGTERM, SIGHUP, SIGINT};

// A signal run was started with ignored (nohup, a background job of a non-interactive shell) stays
// ignored, for run and for the command: a handler would be reset to the default by exec.
void forward_termination_signals() {
  struct sigaction sa {};
  sa.sa_sigaction = forward_to_command;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwardedSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

// Processes whose parent is run: after the command has gone, every process it left running
// (run is their nearest subreaper, so the orphans of the command's tree come to it).
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  const std::string self = std::to_string(getpid());
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid == self) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// Ends what the command left running: SIGTERM (and SIGCONT, should it be stopped), SIGKILL for
// whatever is still there after kLeftoverGrace. Their own children come to run as they go.
constexpr auto kLeftoverGrace = std::chrono::seconds(5);
void end_leftovers() {
  std::set<pid_t> asked;
  const auto deadline = std::chrono::steady_clock::now() + kLeftoverGrace;
  for (;;) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    const auto left = own_children();
    if (left.empty()) return;
    const bool late = std::chrono::steady_clock::now() >= deadline;
    for (pid_t pid : left) {
      if (late) {
        kill(pid, SIGKILL);
      } else if (asked.insert(pid).second) {
        kill(pid, SIGTERM);
        kill(pid, SIGCONT);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Starts the command with `mask` as its signal mask; 0 or the errno of fork/exec. Not posix_spawn:
// the command must get SIGTERM (PR_SET_PDEATHSIG), as a forwarded one, should run end without
// forwarding anything (SIGKILL), or it would go on against a machine that is gone.
int spawn_command(char* const argv[], char* const envp[], const sigset_t& mask, pid_t* pid) {
  int report[2];  // close-on-exec: EOF says the exec happened, 4 bytes are its errno
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t run = getpid();
  const pid_t child = fork();
  if (child < 0) {
    const int e = errno;
    close(report[0]);
    close(report[1]);
    return e;
  }
  if (child == 0) {
    close(report[0]);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != run) _exit(128 + SIGTERM);  // run died before prctl took effect
    for (int sig : kForwardedSignals) {  // not the forwarding handler, before the mask lets them in
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) signal(sig, SIG_DFL);
    }
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    execvpe(argv[0], argv, envp);
    const int e = errno;
    (void)!write(report[1], &e, sizeof e);
    _exit(127);
  }
  close(report[1]);
  int e = 0;
  ssize_t n;
  while ((n = read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return e;
  }
  *pid = child;
  return 0;
}

int run_command(protocol::MachinePaths paths, bool private_dir, const daemon::MachineOptions& m,
                std::vector<std::string> command, bool keep) {
  if (command.empty()) {
    std::fprintf(stderr, "kfdsim run: nothing to run; usage: kfdsim run [options] -- COMMAND [ARGS...]\n");
    return kUsage;
  }
  const std::string shim = shim_library();
  if (!fs::exists(shim)) {
    std::fprintf(stderr, "kfdsim run: shim %s not found (set KFDSIM_SHIM)\n", shim.c_str());
    return kFailed;
  }
  if (splits_preload(shim)) {
    std::fprintf(stderr, "kfdsim run: %s\n", preload_split_advice(shim).c_str());
    return kFailed;
  }
  if (private_dir) {
    std::string tmpl = (fs::temp_directory_path() / "kfdsim-run-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      std::fprintf(stderr, "kfdsim run: cannot create a machine directory in %s: %s\n",
                   fs::temp_directory_path().c_str(), std::strerror(errno));
      return kFailed;
    }
    paths.dir = tmpl;
    paths.socket = tmpl + "/kfdsim.sock";
  }
  auto remove_private_dir = [&] {
    std::error_code ec;
    if (private_dir && !keep) fs::remove_all(paths.dir, ec);
  };
  forward_termination_signals();
  bool already = false;
  if (start_daemon(paths, m, &already, getpid(), private_dir && !keep) != kOk) {
    remove_private_dir();  // start_daemon showed the log's last line
    return kFailed;
  }
  std::vector<std::string> storage;
  auto envp = child_env({"LD_PRELOAD=" + preload_list(shim), "KFDSIM_DIR=" + paths.dir, "KFDSIM_SOCKET=" + paths.socket,
                         std::string(protocol::kEnvAutostart) + "=0"},
                        storage);
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  // Blocked across the spawn, so that a signal is either seen before it (and the command never
  // starts) or forwarded to the command; the command starts with them unblocked.
  sigset_t term, old_mask;
  sigemptyset(&term);
  for (int sig : kForwardedSignals) sigaddset(&term, sig);
  sigprocmask(SIG_BLOCK, &term, &old_mask);
  // Orphans of the command's tree come to run, not to init, so that run can end them. After the
  // daemon's start: kfdsimd --daemonize detaches, and must not become run's.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int err = g_signal_before_command ? ECANCELED : spawn_command(argv.data(), envp.data(), old_mask, &pid);
  if (err == 0) g_command_pid = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  int rc;
  if (err == ECANCELED) {
    rc = 128 + g_signal_before_command;
  } else if (err != 0) {
    std::fprintf(stderr, "kfdsim run: cannot run %s: %s\n", argv[0], std::strerror(err));
    rc = 127;
  } else {
    // Ctrl-\\ goes to the whole foreground group; the command decides, we wait for it.
    signal(SIGQUIT, SIG_IGN);
    // Reaps the orphans that end meanwhile too, until the command itself has ended.
    int status = 0;
    for (;;) {
      const pid_t done = waitpid(-1, &status, 0);
      if (done == pid || (done < 0 && errno == ECHILD)) break;
    }
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // Before the machine stops: what is left may still need the device to end cleanly (gpreemptd
  // resumes the queues it suspended).
  end_leftovers();
  if (!already) stop_daemon(paths, true);
  if (private_dir && keep) std::fprintf(stderr, "kfdsim run: machine directory kept: %s\n", paths.dir.c_str());
  remove_private_dir();
  return rc;
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
      "A machine is a directory ($KFDSIM_DIR, default $XDG_RUNTIME_DIR/kfdsim or /tmp/kfdsim-<uid>) "
      "holding the daemon's socket (kfdsim.sock), its log (kfdsimd.log) and the materialised files "
      "(root/). Programs reach it through the LD_PRELOAD shim libkfdshim.so, which starts a "
      "daemon on demand (exiting after its last client) if none runs. Defaults for the machine "
      "options come from KFDSIM_PROFILE, KFDSIM_GPUS, KFDSIM_KFD_MINOR, KFDSIM_SCHED_POLICY, "
      "KFDSIM_HARDWARE, KFDSIM_CPU_NODES."};
  app.footer(
      "Examples:\n"
      "  kfdsim run -- gpreempt info                     the simulated GPU as gpreempt sees it\n"
      "  kfdsim run --hardware instant -- ./test         runlist changes complete at once\n"
      "  kfdsim run --kfd-minor 12 -- gpreempt info      a KFD older than the debugger API (1.13)\n"
      "  kfdsim run --sched-policy 2 -- gpreempt info    no hardware scheduler: no suspend/resume\n"
      "  kfdsim run -- sh -c 'gpreempt-workload offline --preset cnn --duration 5 & sleep 1;\n"
      "                       gpreempt suspend --pid $! --for 500'\n"
      "  kfdsim start && kfdsim files /sys/kernel/debug/kfd/mqds && kfdsim stop\n"
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
