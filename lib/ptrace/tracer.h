// ptrace as the KFD requires it (docs/kfd-interface.md#ptrace-check): the thread that issues
// DBG_TRAP for a target must be the ptrace parent of the target's main thread. PTRACE_SEIZE does
// not stop the target; a seized target still stops on every signal sent to it, so its tracer must
// keep servicing it (restart it with the signal), and must stop it before it can detach (interrupt,
// wait, detach).
//
// Every method must be called from the same thread (the tracer thread). Abstract so that the
// preemption core can be unit-tested with a fake.
#pragma once

#include <memory>

namespace gpreempt::ptrace {

enum class TraceeState {
  kRunning,
  kGone,    // exited
  kExeced,  // replaced its program image: its KFD process (and our debug session) ended
};

class Tracer {
 public:
  virtual ~Tracer() = default;
  // PTRACE_SEIZE the main thread `pid`. Throws gpreempt::Error: ESRCH "no such process",
  // EBUSY "already traced by <pid> (<comm>)", EPERM "not permitted" with the reason.
  virtual void seize(int pid) = 0;
  // Handle pending stops of `pid` without blocking: re-inject signals, keep group-stops stopped
  // (PTRACE_LISTEN), continue after exec (seized with PTRACE_O_TRACEEXEC, so an exec is an event
  // stop instead of a SIGTRAP that would kill the target). Returns kGone once the task has exited,
  // kExeced after an exec (the tracee is still seized: detach it).
  virtual TraceeState service(int pid) = 0;
  // PTRACE_INTERRUPT, wait for the stop (bounded), PTRACE_DETACH re-delivering a pending signal.
  // Never throws; a target that exited meanwhile is fine (its exit status is left to its real
  // parent when that is us). Returns false when the stop did not come within the bound (e.g.
  // uninterruptible sleep): the tracee is still seized and the interrupt pending; call
  // finish_detach() until it returns true.
  virtual bool detach(int pid) noexcept = 0;
  // Non-blocking second half of a detach() that returned false: true once detached or gone.
  virtual bool finish_detach(int pid) noexcept = 0;
};

std::unique_ptr<Tracer> make_linux_tracer();

}  // namespace gpreempt::ptrace
