// kfdsimd: the simulated KFD device of one simulated machine. Normally started for you — by the
// shim on first use, or by `kfdsim start` / `kfdsim run` — rather than by hand.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>

#include "cli_common.h"
#include "common/thread_scheduling.h"
#include "sim/daemon/machine_options.h"
#include "sim/daemon/server.h"
#include "sim/protocol/machine_paths.h"

using namespace gpreempt::sim;

namespace {
constexpr int kDefaultNice = -10;
}  // namespace

int main(int argc, char** argv) {
  daemon::ServerConfig cfg;
  cfg.paths = protocol::machine_paths([](const char* n) { return std::getenv(n); }, getuid());
  std::string env_error = daemon::apply_environment(cfg.machine, [](const char* n) { return std::getenv(n); });

  CLI::App app{"kfdsimd: simulated /dev/kfd device daemon of one simulated machine.\n"
               "Usually started by the kfd shim on first use or by `kfdsim start`; see `kfdsim --help`."};
  gpreempt::cli_common::add_version_flag(app, "kfdsimd");
  bool daemonize = false;
  std::string dir, socket;
  app.add_option("--dir", dir, "machine directory (default $KFDSIM_DIR)");
  app.add_option("--socket", socket, "socket path (default <dir>/kfdsim.sock or $KFDSIM_SOCKET)");
  app.add_flag("--daemonize", daemonize,
               "detach; return once the socket listens (exit 0) or start-up failed (exit 1)");
  app.add_flag("--persistent", cfg.persistent, "stay up without clients until `kfdsim stop`");
  int owner_pid = 0;
  app.add_option("--owner-pid", owner_pid,
                 "stop (as on SIGTERM) when process PID ends, however it ends: `kfdsim run` passes "
                 "its own pid, so that a run killed outright does not leave its machine running")
      ->check(CLI::PositiveNumber);
  bool remove_dir_with_owner = false;
  app.add_flag("--remove-dir-with-owner", remove_dir_with_owner,
               "with --owner-pid: the machine directory is the owner's; remove it when the owner "
               "ends before stopping the machine itself")
      ->needs("--owner-pid");
  int nice_value = kDefaultNice;
  app.add_option("--nice", nice_value,
                 "scheduling niceness to run at (default -10; needs CAP_SYS_NICE, else the daemon "
                 "says so in its log and keeps the priority it has)")
      ->check(gpreempt::cli_common::in_range(-20, 19));
  app.add_option("--profile", cfg.machine.profile, "device profile (mi308x, mi300x, mi210)");
  app.add_option("--gpus", cfg.machine.gpus, "number of GPUs (0 = as in the captured machine)");
  app.add_option("--kfd-minor", cfg.machine.kfd_minor, "KFD ioctl minor version reported");
  app.add_option("--sched-policy", cfg.machine.sched_policy, "amdgpu.sched_policy (0, 1, 2)")
      ->check(gpreempt::cli_common::in_range(0, 2));
  app.add_option("--kernel-hz", cfg.machine.kernel_hz,
                 "CONFIG_HZ of the simulated kernel (100, 250, 1000)")
      ->check(CLI::IsMember(gpreempt::sim::daemon::kKernelHzChoices));
  app.add_option("--hardware", cfg.machine.hardware, "GPU model behind the KFD (instant, gpu)");
  app.add_option("--cpu-nodes", cfg.machine.cpu_nodes, "CPU nodes: host (this host's) or profile (captured)")
      ->check(CLI::IsMember({"host", "profile"}));
  app.add_flag("--shared", cfg.machine.shared,
               "every uid may use the machine, as every user may open a real /dev/kfd: the "
               "directory readable, the socket connectable by all; KFD calls still act only on "
               "the caller's own processes, and queues/stats/stop stay the owner's and root's");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is success; every other parse problem is a usage error (exit code 2).
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!env_error.empty()) {
    std::fprintf(stderr, "kfdsimd: %s\n", env_error.c_str());
    return 2;
  }
  if (!dir.empty()) {
    cfg.paths.dir = protocol::normalize_dir(dir);
    if (socket.empty() && !std::getenv(protocol::kEnvSocket)) cfg.paths.socket = cfg.paths.dir + "/kfdsim.sock";
  }
  if (!socket.empty()) cfg.paths.socket = protocol::normalize_dir(socket);
  cfg.owner_pid = owner_pid;
  // Every file the machine materialises must be readable by the other users of a shared one,
  // whatever umask its owner runs with (debugfs is closed again by share_machine()).
  if (cfg.machine.shared) ::umask(022);

  int ready = -1;
  if (daemonize) {
    // Nothing of the starting program may stay open in here (a pipe kept open would keep its
    // reader waiting for EOF forever).
    syscall(SYS_close_range, 3U, ~0U, 0U);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child > 0) {
      close(p[1]);
      char c;
      ssize_t n;
      while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR) {
      }
      return n == 1 ? 0 : 1;
    }
    close(p[0]);
    ready = p[1];
    setsid();
    if (chdir("/") != 0) return 1;
    int null = open("/dev/null", O_RDWR);
    std::string log = cfg.paths.log();
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(null, 0);
    dup2(out >= 0 ? out : null, 1);
    dup2(out >= 0 ? out : null, 2);
    if (null > 2) close(null);
    if (out > 2) close(out);
  }
  // The daemon stands in for a GPU, which never waits for a CPU: on a small machine whose cores
  // the workloads' waiters keep busy, a daemon queued behind them for a few ms stretched single
  // suspend calls from 0.5 to 5-15 ms in `gpreempt demo`. Ahead of them, its clock stays closer
  // to the hardware's.
  if (setpriority(PRIO_PROCESS, 0, nice_value) != 0)
    std::fprintf(stderr, "kfdsimd[%d]: cannot set niceness %d (%s); running at %d\n", getpid(), nice_value,
                 std::strerror(errno), getpriority(PRIO_PROCESS, 0));
  // With autogroups (CONFIG_SCHED_AUTOGROUP, on by default) a task's niceness weighs only against
  // its own session's tasks; sessions share the CPU as equals by their autogroup's niceness. A
  // daemonized kfdsimd leads a session of its own, so at niceness -10 it still lost the CPU to a
  // build job of another session for up to 8 ms (perf sched). Its autogroup takes the same
  // niceness. Only as a session leader: otherwise the autogroup is its starter's session's.
  if (getsid(0) == getpid()) {
    if (FILE* ag = std::fopen("/proc/self/autogroup", "w")) {
      const bool ok = std::fprintf(ag, "%d", nice_value) > 0;
      if (std::fclose(ag) != 0 || !ok)
        std::fprintf(stderr, "kfdsimd[%d]: cannot set its autogroup's niceness %d (%s)\n", getpid(),
                     nice_value, std::strerror(errno));
    }
  }
  // Niceness buys CPU share, not promptness: behind busy CPUs a woken daemon still waited for the
  // running task's slice to end (up to a 4 ms tick), and every client's GPU with it. A short slice
  // lets its wake-ups preempt (docs/simulator.md, "Live timing"). The loop is its only thread.
  if (!gpreempt::request_short_slice(std::chrono::microseconds(100)))
    std::fprintf(stderr, "kfdsimd[%d]: no short time slice (%s): wake-ups may wait for busy CPUs\n", getpid(),
                 std::strerror(errno));
  bool owner_gone = false;
  int rc = 0;
  try {
    daemon::Server server(cfg);
    server.stop_on_signals({SIGTERM, SIGINT, SIGHUP});
    server.listen();
    if (ready >= 0) {
      char c = 1;
      (void)!write(ready, &c, 1);
      close(ready);
    }
    rc = server.run();
    owner_gone = server.owner_gone();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kfdsimd: %s\n", e.what());
    return 1;
  }
  // After the server is gone (it writes its records into the directory as it stops). An owner
  // that ended normally stopped the machine itself and removes the directory itself.
  if (owner_gone && remove_dir_with_owner) {
    std::error_code ec;
    std::filesystem::remove_all(cfg.paths.dir, ec);
    if (ec)
      std::fprintf(stderr, "kfdsimd[%d]: cannot remove %s: %s\n", getpid(), cfg.paths.dir.c_str(),
                   ec.message().c_str());
  }
  return rc;
}
