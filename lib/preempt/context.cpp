#include "preempt/context.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <thread>

#include "common/error.h"
#include "kfd/version.h"
#include "preempt/signals.h"

namespace gpreempt::preempt {

namespace {

uint64_t ns_since(Clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

std::string id_list(const std::vector<uint32_t>& ids) {
  std::string s;
  for (uint32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return "[" + s + "]";
}

}  // namespace

struct Context::Target {
  explicit Target(kfd::KfdDriver& d, int pid) : pid(pid), session(d, static_cast<uint32_t>(pid)) {}
  int pid;
  kfd::DebugSession session;
  SuspensionLedger ledger;
  bool traced = false;
  // The snapshot may miss a queue change: events were consumed (their bits cleared in the kernel)
  // but no refresh has succeeded since. Cleared only by a successful refresh, so one failure
  // (ENOMEM, a throw half-way through the events) cannot leave a new queue out of suspend-all.
  bool snapshot_stale = true;
};

Context::Context(ContextOptions options)
    : Context(options, kfd::open_linux_driver(options.device_path), ptrace::make_linux_tracer()) {}

Context::Context(ContextOptions options, std::unique_ptr<kfd::KfdDriver> driver,
                 std::unique_ptr<ptrace::Tracer> tracer)
    : options_(std::move(options)),
      watchdog_ms_(options_.watchdog_bound.count()),
      driver_(std::move(driver)),
      tracer_(std::move(tracer)) {
  version_ = kfd::check_version(*driver_);
  init();
}

void Context::init() {
  // A throwing constructor runs no destructor: undo the slot and the pipes here.
  try {
    if (options_.handle_signals) {
      if (::pipe2(signal_pipe_, O_NONBLOCK | O_CLOEXEC) != 0 ||
          ::pipe2(done_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
        int e = errno;
        throw Error(e, "cannot create the signal pipes: " + errno_text(e));
      }
      signal_slot_ = register_signal_slot({signal_pipe_[1], done_pipe_[0]});
    }
    control_ = std::make_unique<ControlThread>(static_cast<ControlLoop&>(*this));
  } catch (...) {
    release_signal_pipes();
    throw;
  }
}

void Context::release_signal_pipes() noexcept {
  if (signal_slot_ >= 0) unregister_signal_slot(signal_slot_);
  signal_slot_ = -1;
  for (int* p : {signal_pipe_, done_pipe_})
    for (int i = 0; i < 2; ++i) {
      if (p[i] >= 0) ::close(p[i]);
      p[i] = -1;
    }
}

Context::~Context() {
  // Unregister first so that a signal arriving from now on does not wait for this context.
  if (signal_slot_ >= 0) unregister_signal_slot(signal_slot_);
  signal_slot_ = -1;
  try {
    control_->call([this] {
      std::vector<int> pids;
      for (const auto& [pid, t] : targets_) pids.push_back(pid);
      for (int pid : pids) detach_on_thread(pid);
      // Last chance for detaches that timed out: a seized target outlives us only if we exit.
      const auto deadline = Clock::now() + std::chrono::seconds(5);
      while (!detaching_.empty() && Clock::now() < deadline) {
        for (auto it = detaching_.begin(); it != detaching_.end();)
          it = tracer_->finish_detach(*it) ? detaching_.erase(it) : std::next(it);
        if (!detaching_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  } catch (...) {
    // Destruction cannot report; detach_on_thread already falls back to DISABLE.
  }
  control_.reset();
  release_signal_pipes();
}

Clock::time_point Context::now() const { return options_.clock ? options_.clock() : Clock::now(); }

const char* to_string(NoticeKind k) {
  switch (k) {
    case NoticeKind::kWatchdogResume: return "watchdog_resume";
    case NoticeKind::kSignalResume: return "signal_resume";
    case NoticeKind::kTargetGone: return "target_gone";
    case NoticeKind::kForcedDisable: return "forced_disable";
    case NoticeKind::kQueuesMayStaySuspended: return "queues_may_stay_suspended";
    case NoticeKind::kSessionLost: return "session_lost";
    case NoticeKind::kEventError: return "event_error";
    case NoticeKind::kLoopError: return "loop_error";
  }
  return "unknown";
}

void Context::notice(int pid, NoticeKind kind, std::string message) {
  notices_.push_back({pid, std::move(message), kind});
  if (notices_.size() > 256) notices_.erase(notices_.begin());
}

Context::Target& Context::target(int pid) {
  auto it = targets_.find(pid);
  if (it == targets_.end())
    throw Error(ENOENT, "process " + std::to_string(pid) + " is not attached to this context "
                        "(attach it first)");
  return *it->second;
}

void Context::attach(int pid) {
  control_->call([&] {
    if (targets_.count(pid))
      throw Error(EALREADY, "process " + std::to_string(pid) + " is already attached to this context");
    if (detaching_.count(pid)) {
      if (!tracer_->finish_detach(pid))
        throw Error(EBUSY, "process " + std::to_string(pid) + " is still being detached from this "
                           "context (it has not stopped for ptrace yet); try again");
      detaching_.erase(pid);
    }
    auto t = std::make_unique<Target>(*driver_, pid);
    tracer_->seize(pid);
    t->traced = true;
    try {
      t->session.enable();
      // Events raised before ENABLE subscribed us (existing queues' NEW bits) were never
      // written to the pipe: query them regardless.
      handle_events(*t, /*force=*/true);
      current_snapshot(*t, std::nullopt);
    } catch (...) {
      t->session.disable();
      untrace(pid);
      throw;
    }
    targets_.emplace(pid, std::move(t));
  });
  control_->wake();  // watch the new event pipe
}

void Context::detach(int pid) {
  control_->call([&] {
    target(pid);
    std::string stuck = detach_on_thread(pid);
    if (!stuck.empty()) throw Error(EIO, stuck + " (detached anyway)");
  });
}

bool Context::attached(int pid) {
  return control_->call([&] { return targets_.count(pid) != 0; });
}

std::vector<int> Context::targets() {
  return control_->call([&] {
    std::vector<int> out;
    for (const auto& [pid, t] : targets_) out.push_back(pid);
    return out;
  });
}

std::string Context::detach_on_thread(int pid) {
  auto it = targets_.find(pid);
  if (it == targets_.end()) return {};
  Target& t = *it->second;
  std::string failure;
  if (!t.ledger.empty()) {
    try {
      auto r = t.session.resume(t.ledger.ids());
      for (const auto& q : r.queues)
        if (q.outcome != kfd::QueueOutcome::kError) t.ledger.resumed(q.queue_id);
      if (!r.all_done()) failure = "resume on detach incomplete:" + kfd::outcome_summary(r);
    } catch (const Error& e) {
      failure = std::string("resume on detach failed: ") + e.what();
    }
  }
  long d = t.session.disable();  // resumes everything the kernel still has suspended
  std::string stuck;
  // ESRCH: the process is gone and its queues with it.
  if (d != 0 && d != -ESRCH && !t.ledger.empty())
    stuck = "process " + std::to_string(pid) + ": " +
            (failure.empty() ? std::string("detach") : failure) + "; DISABLE failed too (" +
            errno_text(static_cast<int>(-d)) + "): queues " + id_list(t.ledger.ids()) +
            " may stay suspended";
  if (!stuck.empty())
    notice(pid, NoticeKind::kQueuesMayStaySuspended, stuck);
  else if (!failure.empty())
    notice(pid, NoticeKind::kForcedDisable, failure + "; DISABLE resumed every queue");
  if (t.traced) untrace(pid);
  targets_.erase(it);
  return stuck;
}

std::vector<QueueEntry> Context::queues(int pid) {
  return control_->call([&] {
    Target& t = target(pid);
    handle_events(t);
    std::vector<QueueEntry> out;
    for (const auto& q : refresh(t))
      out.push_back({q, t.ledger.contains(q.queue_id)});
    return out;
  });
}

std::vector<kfd::QueueInfo> Context::known_queues(int pid) {
  return control_->call([&] {
    Target& t = target(pid);
    handle_events(t);
    return current_snapshot(t, std::nullopt);
  });
}

BatchOutcome Context::suspend(int pid, const std::optional<std::vector<uint32_t>>& ids,
                              uint32_t grace) {
  const auto t0 = Clock::now();
  BatchOutcome out = control_->call([&] {
    BatchOutcome o;
    o.timing.hop_ns = ns_since(t0);
    Target& t = target(pid);
    // New queues are invisible to SUSPEND until a snapshot clears their EC_QUEUE_NEW bit.
    handle_events(t);
    const auto& snap = current_snapshot(t, ids);
    std::vector<uint32_t> request;
    if (ids) {
      request = *ids;
    } else {
      for (const auto& q : snap) request.push_back(q.queue_id);
    }
    const auto i0 = Clock::now();
    o.result = t.session.suspend(request, grace);
    o.timing.ioctl_ns = ns_since(i0);
    ++stats_.suspend_calls;
    const auto when = now();
    // A scheduler error (bit 30) leaves the queue marked suspended in the kernel (it is marked
    // before the failed runlist rebuild, docs/kfd-interface.md#suspend-queues steps 2-3): track it
    // like a success so that detach, the watchdog and the signal handler resume it too.
    for (const auto& q : o.result.queues)
      if (q.outcome != kfd::QueueOutcome::kInvalid) t.ledger.suspended(q.queue_id, when);
    if (!o.result.inconsistency.empty()) {
      // We cannot tell what the kernel did: put everything back before reporting.
      const std::string why = "SUSPEND_QUEUES result inconsistent: " + o.result.inconsistency;
      throw Error(EPROTO, why + "; " + force_disable(t, why));
    }
    return o;
  });
  out.timing.total_ns = ns_since(t0);
  return out;
}

BatchOutcome Context::resume(int pid, const std::optional<std::vector<uint32_t>>& ids) {
  const auto t0 = Clock::now();
  BatchOutcome out = control_->call([&] {
    BatchOutcome o;
    o.timing.hop_ns = ns_since(t0);
    Target& t = target(pid);
    handle_events(t);
    const auto& snap = current_snapshot(t, ids);
    std::vector<uint32_t> request;
    if (ids) {
      request = *ids;
    } else {
      // Queues we suspended that have since been destroyed are gone from it: the kernel dropped them.
      for (const auto& q : snap) request.push_back(q.queue_id);
    }
    const auto i0 = Clock::now();
    try {
      o.result = t.session.resume(request);
    } catch (const Error& e) {
      if (e.code() == ESRCH) throw;
      const std::string why = std::string("resume failed: ") + e.what();
      throw Error(EIO, why + "; " + force_disable(t, why));
    }
    o.timing.ioctl_ns = ns_since(i0);
    ++stats_.resume_calls;
    for (const auto& q : o.result.queues)
      if (q.outcome != kfd::QueueOutcome::kError) t.ledger.resumed(q.queue_id);
    if (o.result.errors != 0 || !o.result.inconsistency.empty()) {
      const std::string why = "resume incomplete:" + kfd::outcome_summary(o.result) +
                              (o.result.inconsistency.empty() ? "" : " " + o.result.inconsistency);
      throw Error(EIO, why + "; " + force_disable(t, why));
    }
    return o;
  });
  out.timing.total_ns = ns_since(t0);
  return out;
}

std::string Context::force_disable(Target& t, const std::string& reason) {
  ++stats_.forced_disables;
  long d = t.session.disable();
  if (d != 0) {
    // Keep the ledger: the watchdog, the signal handler and detach retry these queues. Restamp it
    // so the watchdog retries one bound from now rather than on every tick.
    const auto when = now();
    for (uint32_t id : t.ledger.ids()) {
      t.ledger.resumed(id);
      t.ledger.suspended(id, when);
    }
    const std::string outcome = "DISABLE failed as well (" + errno_text(static_cast<int>(-d)) +
                                ") — queues of " + std::to_string(t.pid) + " may stay suspended";
    notice(t.pid, NoticeKind::kQueuesMayStaySuspended, reason + "; " + outcome);
    return outcome;
  }
  t.ledger.clear();
  notice(t.pid, NoticeKind::kForcedDisable, reason + "; DISABLE resumed every queue");
  // Stay attached: a fresh session keeps the target controllable.
  try {
    t.session.enable();
    t.snapshot_stale = true;
    refresh(t);
  } catch (const Error& e) {
    notice(t.pid, NoticeKind::kSessionLost, std::string("re-enabling the debug session failed: ") + e.what());
  }
  return "the debug session was disabled, which resumed every queue of " + std::to_string(t.pid);
}

void Context::resume_ledger(Target& t, const std::vector<uint32_t>& ids, NoticeKind kind,
                            const std::string& reason) {
  if (ids.empty()) return;
  try {
    auto r = t.session.resume(ids);
    for (const auto& q : r.queues)
      if (q.outcome != kfd::QueueOutcome::kError) t.ledger.resumed(q.queue_id);
    if (r.errors || !r.inconsistency.empty()) {
      force_disable(t, reason + ": resume incomplete:" + kfd::outcome_summary(r));
      return;
    }
    notice(t.pid, kind, reason + ": resumed queues " + id_list(ids));
  } catch (const Error& e) {
    if (e.code() == ESRCH) return target_gone(t.pid, "exited");
    force_disable(t, reason + ": resume failed: " + e.what());
  }
}

const std::vector<kfd::QueueInfo>& Context::refresh(Target& t) {
  const auto& snap = t.session.refresh_snapshot();
  t.snapshot_stale = false;
  return snap;
}

const std::vector<kfd::QueueInfo>& Context::current_snapshot(
    Target& t, const std::optional<std::vector<uint32_t>>& ids) {
  if (t.snapshot_stale) return refresh(t);
  // An id we have not seen may be a queue created since the last event drain (the kernel raises
  // EC_QUEUE_NEW only after the creating ioctl dropped the process lock): its NEW bit must go.
  if (ids) {
    const auto& snap = t.session.last_snapshot();
    for (uint32_t id : *ids)
      if (std::none_of(snap.begin(), snap.end(), [id](const kfd::QueueInfo& q) { return q.queue_id == id; }))
        return refresh(t);
  }
  return t.session.last_snapshot();
}

bool Context::handle_events(Target& t, bool force) {
  if (!force && !t.session.events_pending()) return false;
  try {
    // Consuming events clears their bits in the kernel: from here until a refresh succeeds, the
    // snapshot may miss a change (see Target::snapshot_stale).
    const bool was_stale = t.snapshot_stale;
    t.snapshot_stale = true;
    kfd::SessionEvents ev = t.session.process_events();
    // Runtime shutdown: the kernel resumed every suspended queue of the target
    // (docs/kfd-interface.md#runtime-enable).
    if (ev.runtime_disabled) t.ledger.clear();
    // Creation (EC_QUEUE_NEW), destruction (EC_DEVICE_QUEUE_DELETE) and runtime start/stop are all
    // announced, so between events the snapshot taken here stays exact and suspend/resume reuse it
    // (one ioctl each). GET_QUEUE_SNAPSHOT (op 13) works whatever the runtime state
    // (docs/kfd-interface.md#debug-trap-prologue: only ops 4-10 need it enabled).
    if (!was_stale && !ev.new_queues && !ev.deleted_queues && !ev.runtime_enabled && !ev.runtime_disabled) {
      t.snapshot_stale = false;
      return false;
    }
    refresh(t);
    return true;
  } catch (const Error& e) {
    if (e.code() == ESRCH) {
      int pid = t.pid;
      target_gone(pid, "exited");
      throw Error(ESRCH, "process " + std::to_string(pid) + " has exited");
    }
    throw;
  }
}

void Context::target_gone(int pid, const std::string& why) {
  auto it = targets_.find(pid);
  if (it == targets_.end()) return;
  const std::size_t n = it->second->ledger.size();
  notice(pid, NoticeKind::kTargetGone, "process " + std::to_string(pid) + " " + why +
                  (n ? " while " + std::to_string(n) + " of its queues were suspended (the kernel "
                       "destroys them with the process)"
                     : ""));
  it->second->session.disable();  // ESRCH: nothing to do; harmless otherwise
  // Reached from ESRCH too, before tick() saw the exit (or after an exec that kept the process
  // alive): a tracee left seized would stay an unreaped zombie or stop on its next signal.
  if (it->second->traced) untrace(pid);
  targets_.erase(it);
}

void Context::untrace(int pid) {
  if (!tracer_->detach(pid)) detaching_.insert(pid);
}

std::vector<int> Context::watched_fds() {
  std::vector<int> fds;
  if (signal_pipe_[0] >= 0) fds.push_back(signal_pipe_[0]);
  for (const auto& [pid, t] : targets_)
    if (t->session.event_fd() >= 0) fds.push_back(t->session.event_fd());
  return fds;
}

void Context::on_readable(int fd) {
  if (fd == signal_pipe_[0]) {
    char buf[16];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    ++stats_.signals_handled;
    std::vector<int> pids;
    for (const auto& [pid, t] : targets_) pids.push_back(pid);
    for (int pid : pids) {
      auto it = targets_.find(pid);
      if (it == targets_.end() || it->second->ledger.empty()) continue;
      resume_ledger(*it->second, it->second->ledger.ids(), NoticeKind::kSignalResume,
                    "signal " + std::to_string(static_cast<int>(buf[0])));
    }
    const char done = 1;
    ssize_t w = ::write(done_pipe_[1], &done, 1);
    (void)w;
    return;
  }
  for (auto& [pid, t] : targets_) {
    if (t->session.event_fd() != fd) continue;
    try {
      handle_events(*t, /*force=*/true);
    } catch (const Error& e) {
      if (e.code() != ESRCH)
        notice(pid, NoticeKind::kEventError, std::string("event handling: ") + e.what());
    }
    return;  // handle_events may have erased the target
  }
}

void Context::tick() {
  std::vector<int> gone, execed;
  for (auto& [pid, t] : targets_) {
    if (!t->traced) continue;
    switch (tracer_->service(pid)) {
      case ptrace::TraceeState::kRunning: break;
      case ptrace::TraceeState::kGone: gone.push_back(pid); break;
      case ptrace::TraceeState::kExeced: execed.push_back(pid); break;
    }
  }
  for (auto it = detaching_.begin(); it != detaching_.end();)
    it = tracer_->finish_detach(*it) ? detaching_.erase(it) : std::next(it);
  for (int pid : gone) {
    targets_.at(pid)->traced = false;  // the tracer already saw the exit: nothing to detach
    target_gone(pid, "exited");
  }
  for (int pid : execed) {
    // exec ended its KFD process (and our session); stop tracing the new program.
    untrace(pid);
    targets_.at(pid)->traced = false;
    target_gone(pid, "replaced its program (exec), which ended its KFD process");
  }
  if (const auto bound = watchdog_bound(); bound.count() > 0) {
    const auto when = now();
    std::vector<int> pids;
    for (auto& [pid, t] : targets_) pids.push_back(pid);
    for (int pid : pids) {
      auto it = targets_.find(pid);
      if (it == targets_.end()) continue;
      auto expired = it->second->ledger.older_than(when, bound);
      if (expired.empty()) continue;
      ++stats_.watchdog_resumes;
      resume_ledger(*it->second, expired, NoticeKind::kWatchdogResume,
                    "watchdog: suspended longer than " +
                        std::to_string(bound.count()) + " ms");
    }
  }
}

std::chrono::milliseconds Context::tick_interval() {
  // Tracees stop on every signal they receive until we restart them: poll often while attached.
  return targets_.empty() && detaching_.empty() ? std::chrono::milliseconds(200)
                                                : std::chrono::milliseconds(5);
}

void Context::on_loop_error(const std::string& what) {
  notice(0, NoticeKind::kLoopError, "control loop: " + what);
}

void Context::set_control_thread_realtime_priority(int priority) {
  control_->set_realtime_priority(priority);
}

ContextStats Context::stats() {
  ContextStats s = control_->call([&] { return stats_; });
  s.hop = control_->hop_stats();
  return s;
}

void Context::post(std::function<void()> fn) { control_->post(std::move(fn)); }

std::vector<Notice> Context::take_notices() {
  return control_->call([&] {
    std::vector<Notice> out;
    out.swap(notices_);
    return out;
  });
}

}  // namespace gpreempt::preempt
