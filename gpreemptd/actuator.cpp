#include "actuator.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "common/error.h"
#include "kfd/grace.h"
#include "process_facts_reader.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
using gpreempt::Error;
using sched::event::Outcome;
using sched::event::TargetOutcome;
using SteadyClock = std::chrono::steady_clock;

Actuator::Actuator(gpreempt::EventLoop& loop, gpreempt::preempt::Context* context,
                   std::string proc_root, std::map<sched::GpuId, uint32_t> clock_mhz,
                   OnDone on_done, OnNotice on_notice)
    : loop_(loop),
      context_(context),
      proc_root_(std::move(proc_root)),
      clock_mhz_(std::move(clock_mhz)),
      on_done_(std::move(on_done)),
      on_notice_(std::move(on_notice)),
      inbox_(loop) {
  if (context_) {
    // The context acts on its own too (watchdog, a target's exit): collect what it says.
    notice_timer_ = loop_.add_timer([this] {
      post([this] {
        ActuationReport none;
        none.completed.action = 0;
        return none;
      });
    });
    loop_.arm_every(notice_timer_, std::chrono::milliseconds(100));
  }
}

Actuator::~Actuator() {
  if (notice_timer_) loop_.unwatch(notice_timer_);
}

void Actuator::post(std::function<ActuationReport()> job) {
  if (!context_) {
    inbox_.post([this, r = job()]() mutable { deliver(std::move(r), {}); });
    return;
  }
  context_->post([this, job = std::move(job)] {
    ActuationReport r = job();
    std::vector<gpreempt::preempt::Notice> notices;
    try {
      notices = context_->take_notices();
    } catch (...) {
    }
    inbox_.post([this, r = std::move(r), notices = std::move(notices)]() mutable {
      deliver(std::move(r), notices);
    });
  });
}

void Actuator::deliver(ActuationReport report,
                       const std::vector<gpreempt::preempt::Notice>& notices) {
  for (const auto& n : notices) on_notice_(n);
  if (report.completed.action == 0) return;  // a notice collection, not an action
  --in_flight_;
  on_done_(std::move(report));
}

void Actuator::ensure_attached(const sched::ProcessKey& key) {
  auto it = attached_.find(key.pid);
  if (it != attached_.end()) {
    if (it->second == key && context_->attached(key.pid)) return;
    // Another process under the same pid, or the context dropped it (exit, exec).
    if (context_->attached(key.pid)) {
      try {
        context_->detach(key.pid);
      } catch (const Error&) {
      }
    }
    attached_.erase(it);
  }
  // Attach only the process the scheduler means: its pid may already belong to another one.
  if (read_process_key(proc_root_, key.pid) != key)
    throw Error(ESRCH, "process " + sched::to_string(key) + " has exited");
  try {
    context_->attach(key.pid);
  } catch (const Error& e) {
    if (e.code() != EALREADY) throw;
  }
  attached_[key.pid] = key;
}

void Actuator::prepare(const sched::ProcessKey& key) {
  if (!context_) return;
  post([this, key] {
    try {
      ensure_attached(key);
    } catch (const std::exception& e) {
      spdlog::warn("cannot attach {} ahead of its first suspend: {}", sched::to_string(key),
                   e.what());
    }
    ActuationReport none;
    none.completed.action = 0;
    return none;
  });
}

std::vector<uint32_t> Actuator::queues_on(int pid, sched::GpuId gpu) const {
  std::vector<uint32_t> ids;
  for (const auto& q : context_->known_queues(pid))
    if (q.gpu_id == gpu) ids.push_back(q.queue_id);
  return ids;
}

// ESRCH, or EPERM from a target that is exiting or gone (PTRACE_SEIZE and the debug ops refuse
// those with EPERM, FACTS §7): not a permission problem, the process is going away.
bool Actuator::target_gone(int error, const sched::ProcessKey& key) const {
  return error == ESRCH || (error == EPERM && exiting_or_gone(proc_root_, key));
}

// The first ioctl's start (hint-to-SUSPEND latency) and every ioctl's own length.
void Actuator::record_ioctl(ActuationReport& report, uint64_t ioctl_ns) {
  if (!report.first_ioctl_at)
    report.first_ioctl_at = SteadyClock::now() - std::chrono::nanoseconds(ioctl_ns);
  report.ioctl_seconds.push_back(static_cast<double>(ioctl_ns) / 1e9);
}

TargetOutcome Actuator::suspend_one(const sched::ProcessKey& key, sched::GpuId gpu, uint32_t grace,
                                    ActuationReport& report) {
  try {
    ensure_attached(key);
    const std::vector<uint32_t> ids = queues_on(key.pid, gpu);
    if (ids.empty()) return {key, Outcome::kDone, 0};
    auto r = context_->suspend(key.pid, ids, grace);
    record_ioctl(report, r.timing.ioctl_ns);
    if (r.result.errors) return {key, Outcome::kTimedOut, 0};
    return {key, Outcome::kDone, 0};
  } catch (const Error& e) {
    if (target_gone(e.code(), key)) return {key, Outcome::kGone, 0};
    spdlog::warn("suspend of {} on GPU {} failed: {}", sched::to_string(key), gpu, e.what());
    return {key, Outcome::kFailed, e.code()};
  } catch (const std::exception& e) {
    spdlog::warn("suspend of {} on GPU {} failed: {}", sched::to_string(key), gpu, e.what());
    return {key, Outcome::kFailed, EIO};
  }
}

TargetOutcome Actuator::resume_one(const sched::ProcessKey& key, sched::GpuId gpu,
                                   ActuationReport& report) {
  try {
    auto it = attached_.find(key.pid);
    if (it == attached_.end() || it->second != key || !context_->attached(key.pid)) {
      // Not (or no longer) ours: nothing of it is suspended through this context.
      return {key, read_process_key(proc_root_, key.pid) == key ? Outcome::kDone : Outcome::kGone,
              0};
    }
    const std::vector<uint32_t> ids = queues_on(key.pid, gpu);
    if (ids.empty()) return {key, Outcome::kDone, 0};
    auto r = context_->resume(key.pid, ids);
    record_ioctl(report, r.timing.ioctl_ns);
    return {key, Outcome::kDone, 0};
  } catch (const Error& e) {
    if (target_gone(e.code(), key)) return {key, Outcome::kGone, 0};
    // The core has already DISABLEd the session, which resumed every queue of the target.
    spdlog::warn("resume of {} on GPU {} failed: {}", sched::to_string(key), gpu, e.what());
    return {key, Outcome::kFailed, e.code()};
  } catch (const std::exception& e) {
    spdlog::warn("resume of {} on GPU {} failed: {}", sched::to_string(key), gpu, e.what());
    return {key, Outcome::kFailed, EIO};
  }
}

void Actuator::suspend(const sched::action::Suspend& a) {
  ++in_flight_;
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(a.grace).count();
  auto clock = clock_mhz_.find(a.gpu);
  const uint32_t grace = gpreempt::kfd::grace_units_from_us(
      static_cast<uint64_t>(us), clock == clock_mhz_.end() ? 0 : clock->second);
  const auto posted = SteadyClock::now();
  post([this, a, grace, posted] {
    ActuationReport r;
    r.posted_at = posted;
    r.started_at = SteadyClock::now();
    r.suspend = true;
    r.completed.action = a.id;
    r.completed.gpu = a.gpu;
    for (const auto& key : a.targets) {
      if (!context_) {
        r.completed.outcomes.push_back({key, Outcome::kFailed, ENODEV});
        continue;
      }
      r.completed.outcomes.push_back(suspend_one(key, a.gpu, grace, r));
    }
    return r;
  });
}

void Actuator::resume(const sched::action::Resume& a) {
  ++in_flight_;
  const auto posted = SteadyClock::now();
  post([this, a, posted] {
    ActuationReport r;
    r.posted_at = posted;
    r.started_at = SteadyClock::now();
    r.suspend = false;
    r.completed.action = a.id;
    r.completed.gpu = a.gpu;
    for (const auto& key : a.targets) {
      if (!context_) {
        r.completed.outcomes.push_back({key, Outcome::kFailed, ENODEV});
        continue;
      }
      r.completed.outcomes.push_back(resume_one(key, a.gpu, r));
    }
    return r;
  });
}

}  // namespace gpreemptd
