#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>

#include "common/error.h"
#include "common/text_file.h"
#include "common/trace.h"
#include "ptrace/proc_status.h"
#include "ptrace/target_policy.h"
#include "ptrace/tracer.h"

namespace gpreempt::ptrace {

namespace {

bool is_group_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// A small /proc file of the directory `dir`, never through a symlink, and its owner; nullopt when
// unreadable (the process exited: ESRCH) or larger than any such file is.
std::optional<std::string> read_proc_file(int dir, const char* name, uid_t* owner = nullptr) {
  const int fd = ::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (owner && ::fstat(fd, &st) == 0) *owner = st.st_uid;
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < (64u << 10))
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (n < 0 || out.empty() || out.size() >= (64u << 10)) return std::nullopt;
  return out;
}

void trace_call(const char* call, int pid, long result, const std::string& out = "") {
  if (trace_enabled()) emit_trace({"ptrace", call, "pid=" + std::to_string(pid), out, result, 0});
}

class LinuxTracer final : public Tracer {
 public:
  void seize(int pid) override {
    if (pid <= 0) throw Error(EINVAL, "invalid pid " + std::to_string(pid));
    if (pid == ::getpid())
      throw Error(EINVAL, "pid " + std::to_string(pid) + " is this process; a process cannot "
                          "ptrace itself (use gpreempt_print_my_queues to inspect own queues)");
    // The /proc/PID directory pins the process checked here: once it exits, reads through it
    // fail (ESRCH) even if its pid is reused, so the same descriptor after the seize tells
    // whether the process seized is the one checked.
    const std::string p = std::to_string(pid);
    const int dir = ::open(("/proc/" + p).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) throw Error(ESRCH, "no process " + p + " (it does not exist or has exited)");
    struct CloseDir {
      int fd;
      ~CloseDir() { ::close(fd); }
    } close_dir{dir};
    // The owner of /proc/PID/status, not of the directory: the kernel gives a non-dumpable
    // process's files to root but leaves its directory to its euid (task_dump_owner).
    uid_t owner = 0;
    auto status = read_proc_file(dir, "status", &owner);
    if (!status) throw Error(ESRCH, "no process " + p + " (it does not exist or has exited)");
    auto tgid = parse_tgid(*status);
    if (tgid && *tgid != pid)
      throw Error(EINVAL, p + " is a thread of process " + std::to_string(*tgid) +
                              "; pass the process id " + std::to_string(*tgid) +
                              " (the KFD checks its main thread)");
    if (std::string why = ptrace_refusal(pid, *status, owner); !why.empty())
      throw Error(EPERM, "not tracing " + why);
    // PTRACE_O_TRACEEXEC: without it, an exec by the target raises a SIGTRAP that we would have
    // to deliver — killing it.
    long r = ::ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXEC));
    int e = r < 0 ? errno : 0;
    trace_call("PTRACE_SEIZE", pid, r < 0 ? -e : r);
    if (r == 0) {
      if (read_proc_file(dir, "stat")) return;
      // The checked process exited between the checks and the seize, and the pid now names
      // another: let that one go.
      if (!detach(pid)) finish_detach(pid);
      throw Error(ESRCH, "process " + p + " exited while being attached (its pid was reused)");
    }
    if (e == ESRCH) throw Error(ESRCH, "no process " + p + " (it does not exist or has exited)");
    if (e == EPERM) {
      if (auto t = tracer_of(pid))
        throw Error(EBUSY, "process " + p + " (" + command_of(pid) + ") is already traced by pid " +
                               std::to_string(t->pid) + " (" + t->comm +
                               "); a process has only one tracer — detach that debugger first");
      throw Error(EPERM, "not permitted to ptrace process " + p + " (" + command_of(pid) +
                             "): run as the same user with kernel.yama.ptrace_scope <= 1 allowing "
                             "it, or with CAP_SYS_PTRACE (root)");
    }
    throw Error(e, "PTRACE_SEIZE of process " + p + " failed: " + errno_text(e));
  }

  TraceeState service(int pid) override {
    for (;;) {
      // Peek first: an exit must not be reaped when this process is also the target's real parent
      // (a controller that launched its own job): that status belongs to the program's own
      // waitpid. As a mere tracer we do reap it, which passes it on to the real parent.
      siginfo_t si{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) != 0) {
        if (errno == EINTR) continue;
        return TraceeState::kGone;  // ECHILD: no longer our tracee
      }
      if (si.si_pid == 0) return TraceeState::kRunning;
      if ((si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) &&
          parent_of(pid) == static_cast<int>(::getpid()))
        return TraceeState::kGone;
      int status = 0;
      pid_t w = ::waitpid(pid, &status, WNOHANG | __WALL);
      if (w == 0) return TraceeState::kRunning;
      if (w < 0) {
        if (errno == EINTR) continue;
        return TraceeState::kGone;  // ECHILD: no longer our tracee (exited and reaped)
      }
      if (WIFEXITED(status) || WIFSIGNALED(status)) return TraceeState::kGone;
      if (!WIFSTOPPED(status)) continue;
      const int sig = WSTOPSIG(status);
      const int event = status >> 16;
      if (event == PTRACE_EVENT_EXEC) {
        long r = ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);
        trace_call("PTRACE_CONT", pid, r, "after exec");
        return TraceeState::kExeced;
      }
      if (event == PTRACE_EVENT_STOP) {
        // Group-stop (SIGSTOP & co.): keep the process stopped as it would be untraced.
        // Otherwise a PTRACE_INTERRUPT stop: let it run.
        long r = is_group_stop_signal(sig) ? ::ptrace(PTRACE_LISTEN, pid, nullptr, nullptr)
                                           : ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);
        trace_call(is_group_stop_signal(sig) ? "PTRACE_LISTEN" : "PTRACE_CONT", pid, r);
      } else {
        // Signal-delivery stop: deliver the signal the target was sent, as if we were not here.
        long r = ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
        trace_call("PTRACE_CONT", pid, r, "sig=" + std::to_string(sig));
      }
    }
  }

  bool detach(int pid) noexcept override {
    long r = ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr);
    trace_call("PTRACE_INTERRUPT", pid, r < 0 ? -errno : r);
    if (r < 0) return true;  // gone, or not ours any more
    // Wait (bounded, short: the control thread serves every target) for the target to stop; it
    // may be in a signal-delivery stop instead of the interrupt stop, in which case the signal is
    // handed back on detach. A target that does not stop in time (uninterruptible sleep) keeps
    // the interrupt pending and is finished from the control loop.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    for (;;) {
      if (finish_detach(pid)) return true;
      if (std::chrono::steady_clock::now() >= deadline) break;
      timespec ts{0, 500'000};
      ::nanosleep(&ts, nullptr);
    }
    trace_call("PTRACE_DETACH", pid, -ETIMEDOUT, "pending");
    return false;
  }

  bool finish_detach(int pid) noexcept override {
    for (;;) {
      // Peek as service() does: the exit of our own child belongs to the program's waitpid.
      siginfo_t si{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &si,
                   WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) != 0) {
        if (errno == EINTR) continue;
        return true;  // ECHILD: no longer our tracee
      }
      if (si.si_pid == 0) return false;
      if ((si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) &&
          parent_of(pid) == static_cast<int>(::getpid()))
        return true;
      int status = 0;
      pid_t w = ::waitpid(pid, &status, WNOHANG | __WALL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return true;
      if (w == 0) return false;
      if (WIFEXITED(status) || WIFSIGNALED(status)) return true;
      if (!WIFSTOPPED(status)) continue;
      const int event = status >> 16;
      const int sig = WSTOPSIG(status);
      long inject = 0;
      if (event == 0 && sig != SIGTRAP) inject = sig;  // a real signal was pending: give it back
      if (event == PTRACE_EVENT_STOP && is_group_stop_signal(sig)) inject = 0;
      long d = ::ptrace(PTRACE_DETACH, pid, nullptr, reinterpret_cast<void*>(inject));
      trace_call("PTRACE_DETACH", pid, d < 0 ? -errno : d, "sig=" + std::to_string(inject));
      return true;
    }
  }
};

}  // namespace

std::unique_ptr<Tracer> make_linux_tracer() { return std::make_unique<LinuxTracer>(); }

}  // namespace gpreempt::ptrace
