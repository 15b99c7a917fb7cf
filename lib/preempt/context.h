// A gpreempt context: one /dev/kfd, one control thread, any number of attached target processes.
//
// Thread-safe: every public method may be called from any thread; the work runs on the control
// thread (the targets' ptrace tracer), so calls on one context are serialized.
//
// Never leaving a target frozen: queues suspended through a context are resumed on detach, on
// destruction, on SIGINT/SIGTERM/SIGHUP (optional), and by the watchdog once they have been
// suspended longer than the configured bound. When a resume fails, the debug session is disabled
// (the kernel then resumes every queue of the target) and the failure is reported.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kfd/driver.h"
#include "kfd/session.h"
#include "preempt/control_thread.h"
#include "preempt/ledger.h"
#include "ptrace/tracer.h"

namespace gpreempt::preempt {

// The watchdog bound when the caller sets none: the C ABI (GPREEMPT_WATCHDOG_DEFAULT_MS), the CLI's
// --watchdog-ms and Python's Context(watchdog_ms=...) all default to it, and 0 means "off" in all.
inline constexpr std::chrono::milliseconds kDefaultWatchdogBound{30000};

struct ContextOptions {
  std::string device_path = "/dev/kfd";
  // Resume any suspension older than this; zero disables the watchdog.
  std::chrono::milliseconds watchdog_bound = kDefaultWatchdogBound;
  bool handle_signals = true;
  // Time source for the watchdog (tests inject one). Default: steady_clock::now.
  std::function<Clock::time_point()> clock;
};

struct QueueEntry {
  kfd::QueueInfo info;
  bool suspended = false;  // suspended through this context and not resumed since
};

struct BatchTiming {
  uint64_t hop_ns = 0;    // caller → control thread
  uint64_t ioctl_ns = 0;  // the SUSPEND/RESUME ioctl itself
  uint64_t total_ns = 0;  // the whole call as the caller saw it (snapshot refresh included)
};

struct BatchOutcome {
  kfd::BatchResult result;
  BatchTiming timing;
};

// What a notice is about, so that callers (gpreemptd's metrics, the CLI) count and react to
// notices without parsing their message text.
enum class NoticeKind {
  kWatchdogResume,          // the watchdog resumed queues suspended longer than its bound
  kSignalResume,            // a terminating signal made the context resume its targets
  kTargetGone,              // the target exited (or exec'd): its KFD process and queues are gone
  kForcedDisable,           // a resume failed; DISABLE resumed every queue of the target
  kQueuesMayStaySuspended,  // resume and DISABLE both failed: queues may stay suspended
  kSessionLost,             // re-enabling the debug session after a DISABLE failed
  kEventError,              // handling the target's debug events failed
  kLoopError,               // the control thread's loop caught an error
};
// "watchdog_resume", "target_gone", ... (JSON, metrics labels, logs).
const char* to_string(NoticeKind k);

// Something the context did on its own (watchdog, signal, target exit, forced disable).
struct Notice {
  int pid = 0;
  std::string message;
  NoticeKind kind = NoticeKind::kLoopError;
};

struct ContextStats {
  uint64_t suspend_calls = 0;
  uint64_t resume_calls = 0;
  uint64_t watchdog_resumes = 0;
  uint64_t forced_disables = 0;
  uint64_t signals_handled = 0;
  HopStats hop;
};

class Context : private ControlLoop {
 public:
  // Opens the device (O_CLOEXEC) and checks its version; throws gpreempt::Error.
  explicit Context(ContextOptions options);
  // With an injected driver and tracer (tests, other transports).
  Context(ContextOptions options, std::unique_ptr<kfd::KfdDriver> driver,
          std::unique_ptr<ptrace::Tracer> tracer);
  ~Context() override;  // detaches every target (resume, DISABLE, ptrace detach)
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  kfd::Version kfd_version() const { return version_; }
  // The watchdog bound in effect (zero: no watchdog).
  std::chrono::milliseconds watchdog_bound() const {
    return std::chrono::milliseconds(watchdog_ms_.load(std::memory_order_relaxed));
  }
  // A new bound from the next tick on (gpreemptd's reload: every bound follows the config).
  void set_watchdog_bound(std::chrono::milliseconds bound) {
    watchdog_ms_.store(bound.count(), std::memory_order_relaxed);
  }

  // PTRACE_SEIZE the main thread, ENABLE a debug session, answer pending runtime events and take
  // a first snapshot. Throws: EALREADY (attached already by this context or another debugger),
  // EBUSY (traced by someone else), EPERM, ESRCH, EINVAL (pid is a thread id).
  void attach(int pid);
  // Resume what we suspended, DISABLE, ptrace detach. ENOENT when not attached; EIO (after
  // detaching) when both the resume and DISABLE failed, so queues may stay suspended.
  void detach(int pid);
  bool attached(int pid);
  std::vector<int> targets();

  // Fresh snapshot of the target's queues (clears EC_QUEUE_NEW, making new queues suspendable).
  std::vector<QueueEntry> queues(int pid);
  // The queues as the target's events have kept them (a fresh snapshot only when that one may be
  // stale): what suspend/resume act on, without an extra GET_QUEUE_SNAPSHOT on the hot path.
  std::vector<kfd::QueueInfo> known_queues(int pid);

  // Suspend `ids` (nullopt: every queue of the target). The queue snapshot is kept current by the
  // target's events (creation, destruction, runtime start/stop) and refreshed before the call when
  // it may be stale or `ids` names a queue it does not hold, so new queues are suspendable.
  // `grace` in the kernel's unit (kfd/grace.h). Per-queue outcomes in the result.
  BatchOutcome suspend(int pid, const std::optional<std::vector<uint32_t>>& ids, uint32_t grace);
  // Resume `ids` (nullopt: every queue of the current snapshot, as for suspend). If the call fails, DISABLE the session
  // (which resumes everything), re-enable it, and throw Error(EIO) saying so.
  BatchOutcome resume(int pid, const std::optional<std::vector<uint32_t>>& ids);

  ContextStats stats();
  // The control thread's scheduling: SCHED_FIFO at `priority` (1..99), or the normal policy (0).
  // Throws Error(errno) (EPERM without CAP_SYS_NICE). See common/thread_scheduling.h.
  void set_control_thread_realtime_priority(int priority);
  // Run `fn` on the control thread without waiting for it (the caller learns of its end through
  // whatever `fn` does last: gpreemptd's actuator writes its completion to an eventfd). `fn` may
  // call this context's methods (they run inline there) and must not throw. Throws
  // Error(ECANCELED) when the context is closing.
  void post(std::function<void()> fn);
  // Notices since the last call (oldest first).
  std::vector<Notice> take_notices();

 private:
  struct Target;
  std::vector<int> watched_fds() override;
  void on_readable(int fd) override;
  void tick() override;
  std::chrono::milliseconds tick_interval() override;
  void on_loop_error(const std::string& what) override;

  void init();
  void release_signal_pipes() noexcept;
  Target& target(int pid);
  // Returns why queues may stay suspended (empty when none can).
  std::string detach_on_thread(int pid);
  // Process pending debug events (all of them with `force`, else only when the event pipe says
  // there are some); true if that refreshed the snapshot (a new queue appeared).
  bool handle_events(Target& t, bool force = false);
  // GET_QUEUE_SNAPSHOT (clearing EC_QUEUE_NEW); marks the snapshot current.
  const std::vector<kfd::QueueInfo>& refresh(Target& t);
  // The snapshot to act on: the one kept by the events unless it may be stale or `ids` names a
  // queue it lacks, in which case a fresh one.
  const std::vector<kfd::QueueInfo>& current_snapshot(Target& t,
                                                      const std::optional<std::vector<uint32_t>>& ids);
  void target_gone(int pid, const std::string& why);
  // ptrace-detach `pid`; one that does not stop in time is finished by tick().
  void untrace(int pid);
  void resume_ledger(Target& t, const std::vector<uint32_t>& ids, NoticeKind kind,
                     const std::string& reason);
  // DISABLE (and re-enable) after a failure; returns what that did to the queues, for messages.
  std::string force_disable(Target& t, const std::string& reason);
  void notice(int pid, NoticeKind kind, std::string message);
  Clock::time_point now() const;

  ContextOptions options_;
  // options_.watchdog_bound, changeable from any thread while the control thread ticks.
  std::atomic<std::int64_t> watchdog_ms_;
  std::unique_ptr<kfd::KfdDriver> driver_;
  std::unique_ptr<ptrace::Tracer> tracer_;
  kfd::Version version_;
  std::map<int, std::unique_ptr<Target>> targets_;
  std::set<int> detaching_;  // forgotten targets still seized: their detach timed out
  std::vector<Notice> notices_;
  ContextStats stats_;
  int signal_pipe_[2] = {-1, -1};
  int done_pipe_[2] = {-1, -1};
  int signal_slot_ = -1;
  std::unique_ptr<ControlThread> control_;  // last: destroyed first, before the state it uses
};

}  // namespace gpreempt::preempt
