#include "sim/daemon/kfdsim_machine.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/json_conventions.h"
#include "sim/protocol/messages.h"
#include "sim/protocol/query.h"
#include "sim/protocol/socket_io.h"

extern char** environ;

namespace gpreempt::sim::kfdsim {

namespace fs = std::filesystem;
namespace jc = gpreempt::json_conventions;
using protocol::Op;

// --json output: one document with "schema_version" (docs/json.md).
void print_document(const nlohmann::json& j, int indent) {
  std::cout << jc::document(nlohmann::ordered_json(j)).dump(indent) << "\n";
}

const char* env(const char* n) { return std::getenv(n); }

namespace {

fs::path exe_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : p.parent_path();
}

}  // namespace

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

void not_admin(const protocol::MachinePaths& paths, const char* what) {
  struct stat st {};
  const std::string owner =
      ::stat(paths.socket.c_str(), &st) == 0 ? " (uid " + std::to_string(st.st_uid) + ")" : "";
  std::fprintf(stderr,
               "kfdsim: only the owner of the machine at %s%s and root may %s (as only root reads "
               "debugfs or unloads the driver on a real node); you are uid %u\n",
               paths.dir.c_str(), owner.c_str(), what, ::getuid());
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
                 pid_t owner, bool owned_dir) {
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

// How long stop waits for the daemon's process to exit after it has agreed to stop.
constexpr int kStopWaitMs = 10000;

// Asks the daemon to stop and waits until its process has exited: it writes its records
// (gpu-stats.json) and removes its socket on the way out, and a caller that removes the machine
// directory next (run, a script's rm -rf) must not race with those writes.
int stop_daemon(const protocol::MachinePaths& paths, bool quiet, bool json) {
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
  if (r.error == 0 && r.ret == -EPERM) {
    if (pidfd >= 0) close(pidfd);
    not_admin(paths, "stop it");
    return kFailed;
  }
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

}  // namespace gpreempt::sim::kfdsim
