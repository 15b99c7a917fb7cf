#include "sim/shim/daemon_client.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sim/protocol/machine_paths.h"
#include "sim/protocol/socket_io.h"
#include "sim/shim/fd_table.h"
#include "sim/shim/real_libc.h"

extern char** environ;

namespace gpreempt::sim::shim {
namespace {

using protocol::Op;

int real_close_fd(int fd) { return REAL(close)(fd); }

// The shim's state outlives every exit handler: objects made on first use are never destroyed,
// since a destructor registered then would run before the atexit handlers registered earlier (a
// HIP program's module destructor, which still frees memory through /dev/kfd).
const protocol::MachinePaths& paths() {
  static const auto* p = new protocol::MachinePaths(
      protocol::machine_paths([](const char* n) { return std::getenv(n); }, getuid()));
  return *p;
}

// Per-process state; reset in the child after fork. Only constant-initialised globals: another
// library's constructor may reach the shim before our own dynamic initialisers have run.
std::mutex g_mutex;
int g_anchor_pid = 0;  // process that owns g_anchor_fd (0 = none yet)
int g_anchor_fd = -1;
bool g_reported = false;
uint32_t g_session = 0;        // live_session(): 0 while the process has no daemon
uint32_t g_sessions_made = 0;  // session numbers are never reused within a process
int g_daemon_pid = 0;          // the daemon of g_session
// A daemon that served this process has gone: the process starts none (its device is gone, a new
// daemon would know nothing of it). Read without the mutex by the path that would start one.
std::atomic<bool> g_lost{false};
std::atomic<bool> g_lost_reported{false};
std::string& g_root() {
  static auto* root = new std::string;  // never destroyed: see paths()
  return *root;
}
std::string& g_lost_message() {
  static auto* message = new std::string;
  return *message;
}

void report_once(const std::string& what) {
  if (g_reported) return;
  g_reported = true;
  std::fprintf(stderr, "kfdshim: %s\n", what.c_str());
}

// kfdsimd: $KFDSIM_DAEMON, else beside this library's directory: <lib>/../bin/kfdsimd in the build
// tree, <libdir>/GPREEMPT_LIB_TO_BIN/kfdsimd in an install (libdir may be lib/x86_64-linux-gnu).
std::string daemon_path() {
  if (const char* p = std::getenv(protocol::kEnvDaemon); p && *p) return p;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&daemon_path), &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    auto slash = lib.rfind('/');
    std::string dir = slash == std::string::npos ? "." : lib.substr(0, slash);
    for (const char* rel : {"../bin", GPREEMPT_LIB_TO_BIN}) {
      std::string candidate = dir + "/" + rel + "/kfdsimd";
      if (REAL(access)(candidate.c_str(), X_OK) == 0) return candidate;  // not our own redirect
    }
    return dir + "/" GPREEMPT_LIB_TO_BIN "/kfdsimd";
  }
  return "kfdsimd";
}

// KFDSIM_AUTOSTART=0: never start a daemon (the processes of a `kfdsim run`).
bool autostart_enabled() {
  const char* v = std::getenv(protocol::kEnvAutostart);
  return !(v && std::strcmp(v, "0") == 0);
}

// Why daemon `pid` of machine `dir` stopped, from the last word it wrote in its log: the daemon logs
// why it stops (kfdsim stop, a signal, its owner gone, its last client gone) before it goes.
std::string exit_reason(const std::string& dir, int pid) {
  const std::string log = dir + "/kfdsimd.log";
  int fd = REAL(open)(log.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "its machine directory is gone (removed with the machine, e.g. by the `kfdsim run` it "
           "belonged to, which has ended)";
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = REAL(read)(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (1u << 20)) text.erase(0, text.size() - (64u << 10));
  }
  real_close_fd(fd);
  const std::string prefix = "kfdsimd[" + std::to_string(pid) + "] ";
  std::string why;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    line.erase(0, prefix.size());
    if (auto sp = line.find(' '); sp != std::string::npos) line.erase(0, sp + 1);  // the time
    if (line.find("stopping") != std::string::npos || line.find("exiting") != std::string::npos ||
        line.find("shutdown requested") != std::string::npos)
      why = line;
  }
  if (!why.empty()) return why;
  return "it ended without saying why in " + log + " (killed?)";
}

void make_dirs(const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') mkdir(dir.substr(0, i).c_str(), 0700);
  }
}

// Starts kfdsimd for this machine unless someone else already did; returns a connected socket.
// The lock makes concurrent first users start one daemon; the daemon takes the same lock before
// it decides to exit, so no client connects to a daemon that is going away.
int start_daemon_and_connect() {
  const auto& p = paths();
  make_dirs(p.dir);
  int lock = REAL(open)(p.lock().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  // Another user's shared machine (kfdsim start --shared): its lock is read-only to us, which
  // flock allows, and its daemon is its owner's to start, never ours.
  const bool ours = lock >= 0;
  if (!ours && errno == EACCES) lock = REAL(open)(p.lock().c_str(), O_RDONLY | O_CLOEXEC);
  if (lock < 0) return -errno;
  while (flock(lock, LOCK_EX) != 0 && errno == EINTR) {
  }
  int s = protocol::connect_unix(p.socket);
  if (s < 0 && !ours) {
    report_once("the machine at " + p.dir + " is another user's and its kfdsimd does not answer (" +
                std::strerror(-s) + "): its owner starts it with `kfdsim --dir " + p.dir +
                " start --shared`");
  } else if (s < 0) {
    std::string exe = daemon_path();
    // The daemon must not load the shim itself, so LD_PRELOAD is dropped from its environment.
    std::vector<char*> env;
    for (char** e = environ; e && *e; ++e)
      if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.push_back(*e);
    env.push_back(nullptr);
    std::string sock_arg = "--socket=" + p.socket;
    std::string dir_arg = "--dir=" + p.dir;
    char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("--daemonize"),
                    const_cast<char*>(dir_arg.c_str()), const_cast<char*>(sock_arg.c_str()), nullptr};
    pid_t child;
    int rc = posix_spawn(&child, exe.c_str(), nullptr, nullptr, argv, env.data());
    if (rc != 0) {
      report_once("cannot start " + exe + ": " + std::strerror(rc) + " (set KFDSIM_DAEMON)");
    } else {
      // --daemonize returns once the socket listens (or the daemon failed to start).
      int status = 0;
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      s = protocol::connect_unix(p.socket);
      if (s < 0)
        report_once("started " + exe + " but " + p.socket + " does not answer: " +
                    std::strerror(-s) + " (see " + p.log() + ")");
    }
  }
  flock(lock, LOCK_UN);
  real_close_fd(lock);
  return s;
}

// A connection to the machine's daemon; starts one only if this process may (see the header).
int connect_daemon(bool may_start) {
  int s = protocol::connect_unix(paths().socket);
  if (s < 0 && may_start && !g_lost.load() && autostart_enabled()) s = start_daemon_and_connect();
  if (s >= 0) fd_table().set_internal(s, true);
  return s;
}

void drop_internal(int& fd) {
  if (fd >= 0) {
    fd_table().set_internal(fd, false);
    real_close_fd(fd);
    fd = -1;
  }
}

// Round trip on `sock`, which the caller owns exclusively (`signals`: see call()).
CallResult round_trip(int sock, const protocol::Request& req,
                      protocol::SignalWait signals = protocol::SignalWait::kIgnore) {
  CallResult r;
  auto msg = protocol::encode(req);
  // A call every handler ends (kAlwaysEnds) must also end for a signal that comes while it is
  // being sent, as the kernel finds a signal pending when its sleep begins: the thread's signals
  // are held from before the send to the wait, which takes them atomically (ppoll).
  const bool hold = signals == protocol::SignalWait::kAlwaysEnds;
  sigset_t all, caller_mask;
  sigfillset(&all);
  if (hold) pthread_sigmask(SIG_BLOCK, &all, &caller_mask);
  struct Restore {
    bool on;
    const sigset_t* mask;
    ~Restore() {
      if (on) pthread_sigmask(SIG_SETMASK, mask, nullptr);
    }
  } restore{hold, &caller_mask};
  if (int e = protocol::send_message(sock, msg); e < 0) {
    r.error = e;
    return r;
  }
  std::vector<uint8_t> in;
  int e = protocol::recv_message(sock, in, &r.fd, signals, hold ? &caller_mask : nullptr);
  if (e == -EINTR) {
    // One interrupt, never answered itself; the call's own answer follows it.
    protocol::Request stop{protocol::Op::kInterrupt, req.pid, req.tid, 0, {}};
    e = protocol::send_message(sock, protocol::encode(stop));
    if (e == 0) e = protocol::recv_message(sock, in, &r.fd);
  }
  if (e < 0) {
    r.error = e;
    return r;
  }
  protocol::DecodeError err;
  auto rep = protocol::decode_reply(in, &err);
  if (!rep) {
    if (r.fd >= 0) real_close_fd(r.fd);
    r.fd = -1;
    r.error = -EPROTO;
    report_once("bad reply from kfdsimd: " + err.what);
    return r;
  }
  r.reply = std::move(*rep);
  return r;
}

// The daemon reads and writes our memory (process_vm_readv/writev) and duplicates our event fd
// (pidfd_getfd) as the kernel would. Under Yama's ptrace_scope 1 only an ancestor or a declared
// tracer may do that, and the daemon is neither: declare it (this replaces an earlier
// PR_SET_PTRACER of the program; scope 2 and 3 leave only root/CAP_SYS_PTRACE anyway).
void allow_daemon_to_trace(int daemon_pid) {
  int fd = REAL(open)("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char c = 0;
  bool restricted = REAL(read)(fd, &c, 1) == 1 && c == '1';
  real_close_fd(fd);
  if (restricted) prctl(PR_SET_PTRACER, static_cast<unsigned long>(daemon_pid), 0, 0, 0);
}

// The anchor never carries anything after the hello: readable means the daemon hung up (it
// closes every connection as it stops, and the kernel closes them when it dies). `wait_ms` lets
// a daemon that is going away finish closing. Caller holds g_mutex.
bool anchor_hung_up_locked(int wait_ms) {
  if (g_anchor_pid != getpid() || g_anchor_fd < 0) return false;
  pollfd p{g_anchor_fd, POLLIN | POLLRDHUP, 0};
  int r;
  while ((r = poll(&p, 1, wait_ms)) < 0 && errno == EINTR) {
  }
  return r > 0;
}

// The daemon of the current session has gone. Caller holds g_mutex.
void mark_lost_locked() {
  if (g_session == 0) return;
  g_lost_message() = "kfdsimd (pid " + std::to_string(g_daemon_pid) + ", machine " + paths().dir +
                     ") exited: " + exit_reason(paths().dir, g_daemon_pid) +
                     "; this process has lost its simulated GPU (its /dev/kfd calls fail with ENODEV)";
  g_lost = true;
  g_session = 0;
  drop_internal(g_anchor_fd);
  g_anchor_pid = 0;
}

// Whether the daemon of the current session has gone (then marked lost): after a connection to it
// failed, which is also what a daemon does to a single connection it will not serve any more.
bool check_lost() {
  std::lock_guard lock(g_mutex);
  if (!anchor_hung_up_locked(200)) return false;
  mark_lost_locked();
  return true;
}

// The anchor of the calling process, made on first use. Caller holds g_mutex.
int ensure_process_locked() {
  int pid = getpid();
  if (g_anchor_pid == pid && g_anchor_fd >= 0) return 0;
  if (g_anchor_pid != pid) drop_internal(g_anchor_fd);  // a copy inherited across fork
  g_session = 0;
  g_anchor_pid = pid;
  int s = connect_daemon(true);
  if (s < 0) {
    // A lost daemon has been reported already; anything else is said once.
    if (!g_lost.load()) {
      std::string why = "cannot reach kfdsimd at " + paths().socket + ": " + std::strerror(-s);
      if (!autostart_enabled())
        why += " (KFDSIM_AUTOSTART=0: no daemon is started on demand; the machine of the `kfdsim "
               "run` this process belongs to has ended)";
      report_once(why);
    }
    g_anchor_pid = 0;
    return s;
  }
  protocol::Request req{Op::kHelloProcess, pid, gettid(), 0, {}};
  CallResult r = round_trip(s, req);
  std::optional<protocol::HelloReply> hello;
  if (r.error == 0 && r.reply.ret == 0) hello = protocol::decode_hello(r.reply.payload);
  if (!hello) {
    drop_internal(s);
    g_anchor_pid = 0;
    report_once("kfdsimd at " + paths().socket + " refused this process");
    return r.error ? r.error : -EPROTO;
  }
  g_anchor_fd = s;
  g_root() = hello->root_dir;
  g_session = ++g_sessions_made;
  g_daemon_pid = hello->daemon_pid;
  allow_daemon_to_trace(hello->daemon_pid);
  return 0;
}

int ensure_process() {
  std::lock_guard lock(g_mutex);
  return ensure_process_locked();
}

// Request connection of the calling thread; closed when the thread exits, by a second
// thread_local object. The main thread's thread_local objects are destroyed in exit() before the
// atexit handlers and static destructors run (glibc calls __call_tls_dtors first), and those may
// still use /dev/kfd: a HIP program's module destructor frees its code objects there. The
// connection itself stays trivially destructible, so that what the closer leaves in it (no
// descriptor) outlives the closer and the next call connects again; a destructor of its own
// could not leave that behind (stores into an object whose lifetime ends are dead stores).
struct ThreadConnection {
  int fd = -1;
  int pid = 0;
};
thread_local ThreadConnection t_conn;

struct ThreadConnectionCloser {
  ~ThreadConnectionCloser() {
    if (t_conn.fd >= 0 && t_conn.pid == getpid()) drop_internal(t_conn.fd);
    t_conn.fd = -1;
    t_conn.pid = 0;
  }
};
thread_local ThreadConnectionCloser t_closer;

int thread_socket() {
  if (t_conn.fd >= 0 && t_conn.pid == getpid()) return t_conn.fd;
  if (t_conn.fd >= 0) drop_internal(t_conn.fd);  // inherited across fork
  // The daemon that has this process's anchor serves its threads too: none other is started.
  int s = connect_daemon(false);
  if (s < 0) return s;
  t_conn.fd = s;
  t_conn.pid = getpid();
  [[maybe_unused]] static thread_local ThreadConnectionCloser* closer = &t_closer;  // constructs it
  return s;
}

void atfork_prepare() { g_mutex.lock(); }
void atfork_parent() { g_mutex.unlock(); }
void atfork_child() {
  // Only the forking thread survives: every shim connection here is a copy of the parent's.
  // Closing the copies now keeps the parent's exec detectable (its anchor's hang-up).
  fd_table().for_each_internal([](int fd) {
    fd_table().set_internal(fd, false);
    real_close_fd(fd);
  });
  g_anchor_fd = -1;
  g_anchor_pid = 0;
  g_session = 0;
  t_conn.fd = -1;
  t_conn.pid = 0;
  g_mutex.unlock();
}

}  // namespace

void install_fork_handler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); });
}

uint32_t live_session() {
  std::lock_guard lock(g_mutex);
  return g_anchor_pid == getpid() ? g_session : 0;
}

void report_lost_daemon() {
  if (!g_lost.load() || g_lost_reported.exchange(true)) return;
  std::string message;
  {
    std::lock_guard lock(g_mutex);
    message = g_lost_message();
  }
  std::fprintf(stderr, "kfdshim: %s\n", message.c_str());
}

CallResult call(Op op, uint64_t arg, std::vector<uint8_t> payload, uint32_t session,
                protocol::SignalWait signals) {
  install_fork_handler();
  CallResult r;
  auto lost = [&] {
    report_lost_daemon();
    r.error = -ENODEV;
    return r;
  };
  if (session != 0 && session != live_session()) return lost();
  if (int e = ensure_process(); e < 0) {
    r.error = e;
    return r;
  }
  int s = thread_socket();
  if (s < 0) {
    if (check_lost()) return lost();
    r.error = s;
    return r;
  }
  protocol::Request req{op, getpid(), gettid(), arg, std::move(payload)};
  r = round_trip(s, req, signals);
  if (r.error == -ECONNRESET || r.error == -EPIPE) {
    // The daemon went away (kfdsim stop, a crash), or dropped only this connection: the thread
    // connects again next time, the process only if its daemon still serves it.
    drop_internal(t_conn.fd);
    if (check_lost()) return lost();
  }
  return r;
}

const std::string& machine_root() {
  install_fork_handler();
  std::lock_guard lock(g_mutex);
  static const std::string empty;
  if (ensure_process_locked() < 0) return empty;
  return g_root();
}

const std::string& configured_root() {
  static const auto* root = new std::string(paths().root());  // never destroyed: see paths()
  return *root;
}

}  // namespace gpreempt::sim::shim
