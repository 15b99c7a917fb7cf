#include "sim/daemon/kfdsim_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "sim/daemon/kfdsim_machine.h"
#include "sim/protocol/messages.h"

namespace gpreempt::sim::kfdsim {

namespace fs = std::filesystem;

namespace {

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

}  // namespace

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

}  // namespace gpreempt::sim::kfdsim
