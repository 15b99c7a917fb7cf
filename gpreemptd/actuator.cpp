#include "actuator.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
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

// The parts of one action, each done on its lane's control thread; the last part done hands the
// whole report over.
struct Actuator::Join {
  std::mutex mu;
  ActuationReport report;
  size_t parts_left = 0;
};

Actuator::Actuator(gpreempt::EventLoop& loop,
                   const std::map<sched::GpuId, gpreempt::preempt::Context*>& contexts,
                   std::string proc_root, std::map<sched::GpuId, uint32_t> clock_mhz,
                   OnDone on_done, OnNotice on_notice)
    : loop_(loop),
      proc_root_(std::move(proc_root)),
      clock_mhz_(std::move(clock_mhz)),
      on_done_(std::move(on_done)),
      on_notice_(std::move(on_notice)),
      inbox_(loop) {
  std::map<gpreempt::preempt::Context*, Lane*> lane_of_context;
  for (const auto& [gpu, context] : contexts) {
    if (!context) continue;
    Lane*& lane = lane_of_context[context];
    if (!lane) {
      lanes_.push_back(std::make_unique<Lane>());
      lane = lanes_.back().get();
      lane->context = context;
    }
    lane_of_gpu_[gpu] = lane;
  }
  if (!lanes_.empty()) {
    // The contexts act on their own too (watchdog, a target's exit): collect what they say.
    notice_timer_ = loop_.add_timer([this] {
      for (auto& lane : lanes_) post(*lane, [] { return std::optional<ActuationReport>(); });
    });
    loop_.arm_every(notice_timer_, std::chrono::milliseconds(100));
  }
}

Actuator::~Actuator() {
  if (notice_timer_) loop_.unwatch(notice_timer_);
}

Actuator::Lane& Actuator::lane_of(sched::GpuId gpu) {
  auto g = lane_of_gpu_.find(gpu);
  return g != lane_of_gpu_.end() ? *g->second : *lanes_.front();
}

Actuator::Lane& Actuator::lane_for(const sched::ProcessKey& key, sched::GpuId gpu) {
  auto it = owner_.find(key.pid);
  if (it != owner_.end() && it->second.first == key) return *it->second.second;
  // New, or a reused pid: the old process's tracer had to wait for its exit before the pid could
  // be reused, so that context no longer traces it and any lane may take the new one.
  Lane& lane = lane_of(gpu);
  owner_[key.pid] = {key, &lane};
  return lane;
}

void Actuator::forget(const sched::ProcessKey& key) {
  auto it = owner_.find(key.pid);
  if (it != owner_.end() && it->second.first == key) owner_.erase(it);
}

void Actuator::post(Lane& lane, std::function<std::optional<ActuationReport>()> job) {
  lane.context->post([this, &lane, job = std::move(job)] {
    std::optional<ActuationReport> r = job();
    std::vector<gpreempt::preempt::Notice> notices;
    try {
      notices = lane.context->take_notices();
    } catch (...) {
    }
    inbox_.post([this, r = std::move(r), notices = std::move(notices)]() mutable {
      deliver(std::move(r), notices);
    });
  });
}

void Actuator::deliver(std::optional<ActuationReport> report,
                       const std::vector<gpreempt::preempt::Notice>& notices) {
  for (const auto& n : notices) on_notice_(n);
  if (!report) return;  // a notice collection, or a part of an action that is not done yet
  --in_flight_;
  on_done_(std::move(*report));
}

void Actuator::act(uint64_t action, sched::GpuId gpu, bool suspend,
                   const std::vector<sched::ProcessKey>& targets, TargetStep step) {
  ++in_flight_;
  ActuationReport head;
  head.suspend = suspend;
  head.completed.action = action;
  head.completed.gpu = gpu;
  head.posted_at = SteadyClock::now();
  if (lanes_.empty()) {
    for (const auto& key : targets) head.completed.outcomes.push_back({key, Outcome::kFailed, ENODEV});
    inbox_.post([this, r = std::move(head)]() mutable { deliver(std::move(r), {}); });
    return;
  }
  std::map<Lane*, std::vector<size_t>> parts;
  for (size_t i = 0; i < targets.size(); ++i) parts[&lane_for(targets[i], gpu)].push_back(i);
  if (parts.empty()) parts[&lane_of(gpu)];  // no target: it still completes, in the GPU's turn
  auto join = std::make_shared<Join>();
  join->report = std::move(head);
  join->report.completed.outcomes.assign(targets.size(), {});
  join->parts_left = parts.size();
  for (auto& [lane, indices] : parts) {
    std::vector<sched::ProcessKey> keys;
    for (size_t i : indices) keys.push_back(targets[i]);
    post(*lane, [this, lane = lane, join, indices = indices, keys = std::move(keys), step]()
                    -> std::optional<ActuationReport> {
      ActuationReport part;
      part.started_at = SteadyClock::now();
      std::vector<sched::event::TargetOutcome> outcomes;
      for (const auto& key : keys) outcomes.push_back(step(*lane, key, part));
      std::lock_guard lock(join->mu);
      ActuationReport& r = join->report;
      for (size_t k = 0; k < indices.size(); ++k) r.completed.outcomes[indices[k]] = outcomes[k];
      if (r.started_at == SteadyClock::time_point{} || part.started_at < r.started_at)
        r.started_at = part.started_at;
      if (part.first_ioctl_at && (!r.first_ioctl_at || *part.first_ioctl_at < *r.first_ioctl_at))
        r.first_ioctl_at = part.first_ioctl_at;
      r.ioctl_seconds.insert(r.ioctl_seconds.end(), part.ioctl_seconds.begin(),
                             part.ioctl_seconds.end());
      if (--join->parts_left > 0) return std::nullopt;
      return std::move(r);
    });
  }
}

void Actuator::ensure_attached(Lane& lane, const sched::ProcessKey& key) {
  auto* context = lane.context;
  auto it = lane.attached.find(key.pid);
  if (it != lane.attached.end()) {
    if (it->second == key && context->attached(key.pid)) return;
    // Another process under the same pid, or the context dropped it (exit, exec).
    if (context->attached(key.pid)) {
      try {
        context->detach(key.pid);
      } catch (const Error&) {
      }
    }
    lane.attached.erase(it);
  }
  // Attach only the process the scheduler means: its pid may already belong to another one.
  if (read_process_key(proc_root_, key.pid) != key)
    throw Error(ESRCH, "process " + sched::to_string(key) + " has exited");
  try {
    context->attach(key.pid);
  } catch (const Error& e) {
    if (e.code() != EALREADY) throw;
  }
  lane.attached[key.pid] = key;
}

void Actuator::prepare(const sched::ProcessKey& key, sched::GpuId gpu) {
  if (lanes_.empty()) return;
  Lane& lane = lane_for(key, gpu);
  post(lane, [this, &lane, key] {
    try {
      ensure_attached(lane, key);
    } catch (const std::exception& e) {
      spdlog::warn("cannot attach {} ahead of its first suspend: {}", sched::to_string(key),
                   e.what());
    }
    return std::optional<ActuationReport>();
  });
}

std::vector<uint32_t> Actuator::queues_on(const Lane& lane, int pid, sched::GpuId gpu) {
  std::vector<uint32_t> ids;
  for (const auto& q : lane.context->known_queues(pid))
    if (q.gpu_id == gpu) ids.push_back(q.queue_id);
  return ids;
}

// ESRCH, or EPERM from a target that is exiting or gone (PTRACE_SEIZE and the debug ops refuse
// those with EPERM, docs/kfd-interface.md#ptrace-check): not a permission problem, the process is
// going away.
bool Actuator::target_gone(int error, const sched::ProcessKey& key) const {
  return error == ESRCH || (error == EPERM && exiting_or_gone(proc_root_, key));
}

// The first ioctl's start (hint-to-SUSPEND latency) and every ioctl's own length.
void Actuator::record_ioctl(ActuationReport& report, uint64_t ioctl_ns) {
  if (!report.first_ioctl_at)
    report.first_ioctl_at = SteadyClock::now() - std::chrono::nanoseconds(ioctl_ns);
  report.ioctl_seconds.push_back(static_cast<double>(ioctl_ns) / 1e9);
}

TargetOutcome Actuator::suspend_one(Lane& lane, const sched::ProcessKey& key, sched::GpuId gpu,
                                    uint32_t grace, ActuationReport& report) {
  try {
    ensure_attached(lane, key);
    const std::vector<uint32_t> ids = queues_on(lane, key.pid, gpu);
    if (ids.empty()) return {key, Outcome::kDone, 0};
    auto r = lane.context->suspend(key.pid, ids, grace);
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

TargetOutcome Actuator::resume_one(Lane& lane, const sched::ProcessKey& key, sched::GpuId gpu,
                                   ActuationReport& report) {
  try {
    auto it = lane.attached.find(key.pid);
    if (it == lane.attached.end() || it->second != key || !lane.context->attached(key.pid)) {
      // Not (or no longer) ours: nothing of it is suspended through this context.
      return {key, read_process_key(proc_root_, key.pid) == key ? Outcome::kDone : Outcome::kGone,
              0};
    }
    const std::vector<uint32_t> ids = queues_on(lane, key.pid, gpu);
    if (ids.empty()) return {key, Outcome::kDone, 0};
    auto r = lane.context->resume(key.pid, ids);
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

void Actuator::suspend(sched::Time, const sched::action::Suspend& a) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(a.grace).count();
  auto clock = clock_mhz_.find(a.gpu);
  const uint32_t grace = gpreempt::kfd::grace_units_from_us(
      static_cast<uint64_t>(us), clock == clock_mhz_.end() ? 0 : clock->second);
  act(a.id, a.gpu, true, a.targets,
      [this, gpu = a.gpu, grace](Lane& lane, const sched::ProcessKey& key, ActuationReport& r) {
        return suspend_one(lane, key, gpu, grace, r);
      });
}

void Actuator::resume(sched::Time, const sched::action::Resume& a) {
  act(a.id, a.gpu, false, a.targets,
      [this, gpu = a.gpu](Lane& lane, const sched::ProcessKey& key, ActuationReport& r) {
        return resume_one(lane, key, gpu, r);
      });
}

}  // namespace gpreemptd
