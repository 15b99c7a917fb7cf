#include "eval/des/actuator.h"

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "kfd/grace.h"

namespace gpreempt::eval::des {

using sim::gpu::SimTime;

SimActuator::SimActuator(std::vector<sim::gpu::GpuEngine*> engines,
                         std::vector<sched::GpuId> gpu_ids, uint32_t clock_mhz,
                         SimTime overhead_ns, Post post, Complete complete)
    : engines_(std::move(engines)),
      gpu_ids_(std::move(gpu_ids)),
      clock_mhz_(clock_mhz),
      overhead_ns_(overhead_ns),
      post_(std::move(post)),
      complete_(std::move(complete)),
      queues_(engines_.size()),
      runnable_(engines_.size()) {}

void SimActuator::add_queues(const sched::ProcessKey& key, uint32_t gpu,
                             std::vector<sim::gpu::QueueKey> queues) {
  for (const auto& q : queues) runnable_.at(gpu).insert(q);
  auto& v = queues_.at(gpu)[key];
  v.insert(v.end(), queues.begin(), queues.end());
}

uint32_t SimActuator::gpu_index(sched::GpuId id) const {
  auto it = std::find(gpu_ids_.begin(), gpu_ids_.end(), id);
  return static_cast<uint32_t>(it - gpu_ids_.begin());
}

void SimActuator::suspend(sched::Time, const sched::action::Suspend& a) {
  const uint32_t g = gpu_index(a.gpu);
  const uint64_t id = a.id;
  const auto targets = a.targets;
  const auto grace = a.grace;
  post_(overhead_ns_, [this, id, g, targets, grace] { run(id, g, targets, true, grace); });
}

void SimActuator::resume(sched::Time, const sched::action::Resume& a) {
  const uint32_t g = gpu_index(a.gpu);
  const uint64_t id = a.id;
  const auto targets = a.targets;
  post_(overhead_ns_, [this, id, g, targets] { run(id, g, targets, false, sched::Duration{0}); });
}

void SimActuator::run(uint64_t id, uint32_t gpu, const std::vector<sched::ProcessKey>& targets,
                      bool suspend, sched::Duration grace) {
  Pending& p = pending_[id];
  p.answer.action = id;
  p.answer.gpu = gpu_ids_.at(gpu);
  for (const auto& key : targets) p.answer.outcomes.push_back({key, sched::event::Outcome::kFailed, 0});
  p.left = targets.size();
  if (targets.empty()) {
    auto answer = p.answer;
    pending_.erase(id);
    complete_(answer);
    return;
  }
  // The grace period in the kernel's unit (1,000 GPU clocks), converted as gpreemptd's actuator
  // converts it: whole microseconds (truncated), then units rounded up (kfd/grace.h). The
  // cross-engine test compares the two.
  const uint64_t grace_us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(grace).count());
  const uint32_t units = kfd::grace_units_from_us(grace_us, clock_mhz_);
  for (const auto& key : targets) {
    if (gone_.count(key)) {
      post_(0, [this, id, gpu, key, suspend] { answered(id, gpu, key, suspend, -ESRCH); });
      continue;
    }
    // One ioctl per target process; each leaves that process's queues out (or puts them back).
    auto q = queues_.at(gpu).find(key);
    if (q != queues_.at(gpu).end())
      for (const auto& qk : q->second) {
        if (suspend) runnable_[gpu].erase(qk);
        else runnable_[gpu].insert(qk);
      }
    if (observer_) {
      Call c{engines_.at(gpu)->now(), gpu, key, suspend, suspend ? units : 0, {}};
      if (q != queues_.at(gpu).end()) c.queues = q->second;
      observer_(c);
    }
    std::vector<sim::gpu::QueueKey> runnable(runnable_[gpu].begin(), runnable_[gpu].end());
    engines_.at(gpu)->execute_runlist(units, runnable, [this, id, gpu, key, suspend](int result) {
      // The engine calls back from inside its own event processing: answer from the DES queue.
      post_(0, [this, id, gpu, key, suspend, result] { answered(id, gpu, key, suspend, result); });
    });
  }
}

void SimActuator::answered(uint64_t id, uint32_t gpu, const sched::ProcessKey& key, bool suspend,
                           int result) {
  const SimTime now = engines_.at(gpu)->now();
  sched::event::TargetOutcome o{key, sched::event::Outcome::kDone, 0};
  if (result == -ESRCH || gone_.count(key)) {  // gone before or while its update ran
    o.outcome = sched::event::Outcome::kGone;
  } else if (result == -ETIME) {
    o.outcome = sched::event::Outcome::kTimedOut;
    ++timeouts_;
  } else if (result != 0) {
    o.outcome = sched::event::Outcome::kFailed;
    o.error = -result;
    ++failures_;
  }
  const auto slot = std::make_pair(gpu, key);
  if (suspend && o.outcome == sched::event::Outcome::kDone) {
    open_.emplace(slot, now);
  } else if (!suspend) {
    if (auto it = open_.find(slot); it != open_.end()) {
      windows_.push_back({gpu, key, it->second, now});
      open_.erase(it);
    }
  }
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  for (auto& slot_of : it->second.answer.outcomes)
    if (slot_of.key == key) slot_of = o;
  if (--it->second.left == 0) {
    auto answer = std::move(it->second.answer);
    pending_.erase(it);
    complete_(answer);
  }
}

void SimActuator::exited(const sched::ProcessKey& key, SimTime now) {
  gone_.insert(key);
  for (uint32_t g = 0; g < queues_.size(); ++g) {
    auto q = queues_[g].find(key);
    if (q == queues_[g].end()) continue;
    for (const auto& qk : q->second) runnable_[g].erase(qk);
    queues_[g].erase(q);
    if (auto it = open_.find({g, key}); it != open_.end()) {
      windows_.push_back({g, key, it->second, now});
      open_.erase(it);
    }
  }
}

void SimActuator::finish(SimTime end) {
  for (const auto& [slot, since] : open_) windows_.push_back({slot.first, slot.second, since, end});
  open_.clear();
}

}  // namespace gpreempt::eval::des
