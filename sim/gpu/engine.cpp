// The GPU model's public side (engine.h) and its event loop; what the events do is in
// engine_dispatch.cpp (what runs where) and engine_runlist.cpp (the hardware scheduler).
#include "sim/gpu/engine.h"

#include "sim/gpu/engine_impl.h"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>

namespace gpreempt::sim::gpu {

void GpuEngine::Impl::handle(const Event& e) {
  ++self.counters_.events;
  switch (e.kind) {
    case EvKind::kCohortEnd: on_cohort_end(e.a); break;
    case EvKind::kJobStart: on_job_start(e.a, e.b); break;
    case EvKind::kUnmapStart: on_unmap_start(e.a); break;
    case EvKind::kGraceExpired: on_grace_expired(e.a); break;
    case EvKind::kSaveDone: on_save_done(e.a); break;
    case EvKind::kMapDone: on_map_done(e.a); break;
    case EvKind::kCopyDone: on_copy_done(e.a); break;
    case EvKind::kFailTimeout: on_fail_timeout(e.a); break;
    case EvKind::kQuantum: on_quantum(e.a); break;
    case EvKind::kWake: resume_everything(); break;
    case EvKind::kDispatch:
      xccs[e.a].dispatch_pending = false;
      dispatch(static_cast<uint32_t>(e.a));
      break;
  }
}

GpuEngine::GpuEngine(GpuProfile profile, uint32_t gpu_id, EngineOptions options)
    : profile_(std::move(profile)), gpu_id_(gpu_id) {
  impl_ = std::make_unique<Impl>(*this, std::move(options));
}

GpuEngine::~GpuEngine() = default;

void GpuEngine::add_queue(QueueKey key, uint32_t priority, bool suspended) {
  auto& I = *impl_;
  if (I.queues.count(key)) return;
  Queue q;
  q.key = key;
  q.priority = priority;
  q.pipe_priority = pipe_priority_of(priority);
  q.serial = I.next_queue_serial++;
  q.want_runnable = !suspended;
  I.queue_by_serial[q.serial] = key;
  I.queues.emplace(key, std::move(q));
  if (I.opt.remap_on_queue_change) {
    Update u;
    u.internal = true;
    u.kind = RunlistKind::kCreate;
    I.enqueue_update(std::move(u));
  } else if (I.phase == Phase::kRunning && !I.update_active) {
    I.apply_runnable();
  }
}

void GpuEngine::remove_queue(QueueKey key) {
  auto& I = *impl_;
  auto it = I.queues.find(key);
  if (it == I.queues.end()) return;
  // Its resident waves are discarded with the queue.
  std::vector<uint64_t> drop;
  for (auto& [id, c] : I.cohorts) {
    auto k = I.kernels.find(c.kernel);
    if (k != I.kernels.end() && k->second.queue == key) drop.push_back(id);
  }
  for (uint64_t id : drop) {
    const Cohort c = I.cohorts.at(id);
    I.cohorts.erase(id);
    I.give_slots(c.xcc, c.pool, c.wgs, c.units);
    I.group_live(c.group, -1);
  }
  if (it->second.kernel) I.kernels.erase(it->second.kernel);
  I.queue_by_serial.erase(it->second.serial);
  I.queues.erase(it);
  if (I.phase == Phase::kDraining && I.cohorts.empty()) I.begin_save();
  if (I.opt.remap_on_queue_change) {
    Update u;
    u.internal = true;
    u.kind = RunlistKind::kDestroy;
    I.enqueue_update(std::move(u));
  } else {
    if (I.phase == Phase::kRunning && !I.update_active) I.apply_runnable();
    I.resume_everything();
  }
}

bool GpuEngine::has_queue(QueueKey key) const { return impl_->queues.count(key) > 0; }

void GpuEngine::set_cu_mask(QueueKey key, uint32_t first_cu, uint32_t cus) {
  auto& I = *impl_;
  auto it = I.queues.find(key);
  if (it == I.queues.end()) return;
  first_cu = std::min(first_cu, profile_.cus_per_xcc);
  cus = std::min(cus, profile_.cus_per_xcc - first_cu);
  int pool = -1;
  for (std::size_t i = 0; i < I.pools.size(); ++i)
    if (I.pools[i].first_cu == first_cu && I.pools[i].cus == cus) pool = static_cast<int>(i);
  if (pool < 0) {
    pool = static_cast<int>(I.pools.size());
    I.pools.push_back({first_cu, cus});
    for (auto& x : I.xccs)
      x.pools.push_back({static_cast<uint64_t>(cus) * profile_.max_waves_per_cu * kUnitsPerWaveSlot,
                         static_cast<uint64_t>(cus) * profile_.max_workgroups_per_cu, 0});
  }
  it->second.pool = pool;
}

uint64_t GpuEngine::cu_mask_peak_waves(uint32_t first_cu, uint32_t cus) const {
  const auto& I = *impl_;
  uint64_t peak = 0;
  for (std::size_t i = 0; i < I.pools.size(); ++i)
    if (I.pools[i].first_cu == first_cu && I.pools[i].cus == cus)
      for (const auto& x : I.xccs) peak = std::max(peak, x.pools[i].peak_units);
  return peak / kUnitsPerWaveSlot;
}

void GpuEngine::set_queue_group(QueueKey key, uint32_t group) {
  auto it = impl_->queues.find(key);
  if (it != impl_->queues.end()) it->second.group = group;
}

SimTime GpuEngine::group_busy_ns(uint32_t group) const { return impl_->group_busy(group); }

void GpuEngine::submit_kernel(QueueKey key, const KernelSpec& spec, JobDone done) {
  auto& I = *impl_;
  std::string error;
  const auto occ = occupancy(profile_, spec, &error);
  if (!occ) throw std::invalid_argument(error);
  auto it = I.queues.find(key);
  if (it == I.queues.end()) return;
  Job j;
  j.is_kernel = true;
  j.spec = spec;
  j.occ = *occ;
  j.done = std::move(done);
  j.queued = now_;
  j.serial = I.next_job_serial++;
  it->second.jobs.push_back(std::move(j));
  I.try_start(it->second);
}

void GpuEngine::submit_barrier(QueueKey key, BarrierReady ready, JobDone done) {
  auto& I = *impl_;
  auto it = I.queues.find(key);
  if (it == I.queues.end()) return;
  Job j;
  j.is_kernel = false;
  j.ready = std::move(ready);
  j.done = std::move(done);
  j.queued = now_;
  j.serial = I.next_job_serial++;
  it->second.jobs.push_back(std::move(j));
  I.try_start(it->second);
}

void GpuEngine::recheck_barriers() { impl_->recheck_barriers(); }

void GpuEngine::execute_runlist(uint32_t grace_kclk, const std::vector<QueueKey>& runnable,
                                std::function<void(int)> done) {
  Update u;
  u.grace = grace_kclk;
  u.runnable = runnable;
  u.done = std::move(done);
  impl_->enqueue_update(std::move(u));
}

std::optional<SimTime> GpuEngine::next_event_time() const {
  if (impl_->events.empty()) return std::nullopt;
  return std::max(impl_->events.top().t, now_);
}

void GpuEngine::advance_to(SimTime t) {
  auto& ev = impl_->events;
  while (!ev.empty() && ev.top().t <= t) {
    const Event e = ev.top();
    ev.pop();
    now_ = std::max(now_, e.t);
    impl_->handle(e);
  }
  now_ = std::max(now_, t);
}

SimTime GpuEngine::run_until_idle(SimTime limit) {
  while (auto t = next_event_time()) {
    if (*t > limit) break;
    advance_to(*t);
  }
  return now_;
}

std::optional<QueueState> GpuEngine::queue_state(QueueKey key) const {
  const auto& I = *impl_;
  auto it = I.queues.find(key);
  if (it == I.queues.end()) return std::nullopt;
  const Queue& q = it->second;
  QueueState s;
  s.runnable = q.runnable;
  s.mapped = q.mapped;
  s.priority = q.priority;
  s.jobs = q.jobs.size();
  s.completed = q.completed;
  if (q.kernel) {
    auto k = I.kernels.find(q.kernel);
    if (k != I.kernels.end()) {
      s.workgroups_total = k->second.total_wgs;
      s.workgroups_done = k->second.total_wgs - k->second.outstanding;
      for (const auto& sv : k->second.saved) s.waves_saved += sv.waves;
      for (const auto& [id, c] : I.cohorts)
        if (c.kernel == q.kernel) s.waves_running += c.waves;
    }
  }
  return s;
}

uint32_t GpuEngine::busy_waves(uint32_t xcc) const {
  const auto& p = profile_;
  const uint64_t cap = static_cast<uint64_t>(p.cus_per_xcc) * p.max_waves_per_cu * kUnitsPerWaveSlot;
  return static_cast<uint32_t>((cap - impl_->xccs.at(xcc).free_units) / kUnitsPerWaveSlot);
}

}  // namespace gpreempt::sim::gpu
