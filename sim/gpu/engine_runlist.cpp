// The hardware scheduler's runlist: updates (unmap, grace, CWSR save, map, restore), their
// faults, and the time slices of an oversubscribed runlist.
#include "sim/gpu/engine_impl.h"

#include <algorithm>
#include <limits>
#include <set>
#include <span>

namespace gpreempt::sim::gpu {

GpuEngine::Impl::Frozen GpuEngine::Impl::freeze(const std::function<bool(const Queue&)>& which) {
  Frozen out;
  std::vector<uint64_t> xcc_bytes(xccs.size(), 0);
  std::vector<uint64_t> ids;
  for (auto& [id, c] : cohorts) {
    auto k = kernels.find(c.kernel);
    if (k == kernels.end()) continue;
    auto q = queues.find(k->second.queue);
    if (q == queues.end() || !which(q->second)) continue;
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());  // deterministic order, independent of hashing
  for (uint64_t id : ids) {
    const Cohort c = cohorts.at(id);
    cohorts.erase(id);
    give_slots(c.xcc, c.pool, c.wgs, c.units);
    group_live(c.group, -1);
    kernels.at(c.kernel).saved.push_back(
        {c.xcc, c.wgs, c.waves, c.bytes, std::max<SimTime>(c.end - now(), 0)});
    out.waves += c.waves;
    xcc_bytes[c.xcc] += c.bytes;
  }
  out.bytes = bounded_bytes(xcc_bytes);
  return out;
}

uint64_t GpuEngine::Impl::bounded_bytes(const std::vector<uint64_t>& xcc_bytes) const {
  const uint64_t cap = static_cast<uint64_t>(self.profile_.cus_per_xcc) * cwsr_bytes_per_cu(self.profile_);
  uint64_t total = 0;
  for (uint64_t b : xcc_bytes) total += std::min(b, cap);
  return total;
}

GpuEngine::Impl::Frozen GpuEngine::Impl::saved_of_mapped() const {
  Frozen f;
  std::vector<uint64_t> xcc_bytes(xccs.size(), 0);
  for (const auto& [key, q] : queues) {
    if (!q.mapped || !q.runnable || q.kernel == 0) continue;
    auto k = kernels.find(q.kernel);
    if (k == kernels.end()) continue;
    for (const auto& s : k->second.saved) {
      f.waves += s.waves;
      xcc_bytes[s.xcc] += s.bytes;
    }
  }
  f.bytes = bounded_bytes(xcc_bytes);
  return f;
}

void GpuEngine::Impl::compute_mapping() {
  std::vector<Queue*> run;
  for (auto& [k, q] : queues) {
    q.mapped = false;
    if (q.runnable) run.push_back(&q);
  }
  std::sort(run.begin(), run.end(), [](Queue* a, Queue* b) { return a->serial < b->serial; });
  if (!run.empty()) {
    const std::size_t off = static_cast<std::size_t>(rotation % run.size());
    std::rotate(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(off), run.end());
  }
  std::stable_sort(run.begin(), run.end(), [](Queue* a, Queue* b) {
    if (a->pipe_priority != b->pipe_priority) return a->pipe_priority > b->pipe_priority;
    return a->priority > b->priority;
  });
  const std::size_t slots = self.profile_.hqd_slots();
  for (std::size_t i = 0; i < run.size() && i < slots; ++i) run[i]->mapped = true;
  if (run.size() > slots && !quantum_armed) {
    quantum_armed = true;
    schedule(now() + self.profile_.oversubscription_quantum_ns, EvKind::kQuantum, ++quantum_gen);
  }
}

void GpuEngine::Impl::enqueue_update(Update u) {
  u.seq = next_update++;
  u.rec.requested_ns = now();
  updates.push_back(std::move(u));
  start_next_update();
}

RunlistKind GpuEngine::Impl::classify(const Update& u) const {
  std::set<QueueKey> next(u.runnable.begin(), u.runnable.end());
  bool lost = false, gained = false;
  for (const auto& [k, q] : queues) {
    const bool now_runnable = q.want_runnable;
    const bool will = next.count(k) > 0;
    lost |= now_runnable && !will;
    gained |= !now_runnable && will;
  }
  if (lost) return RunlistKind::kSuspend;
  if (gained) return RunlistKind::kResume;
  return RunlistKind::kUpdate;
}

void GpuEngine::Impl::start_next_update() {
  if (update_active || updates.empty() || phase != Phase::kRunning) return;
  update_active = true;
  Update& u = updates.front();
  if (u.internal) {
    u.runnable.clear();
    for (const auto& [k, q] : queues)
      if (q.want_runnable) u.runnable.push_back(k);
  }
  const RunlistKind kind = u.kind ? *u.kind : classify(u);
  u.rec.seq = u.seq;
  u.rec.gpu_id = self.gpu_id_;
  u.rec.kind = kind;
  u.rec.grace_kclk = u.grace;
  u.started = now();
  ++self.counters_.runlist_updates;
  if (kind == RunlistKind::kSuspend) {
    ++self.counters_.suspends;
    u.fault = opt.faults.for_suspend(++suspend_count);
  } else if (kind == RunlistKind::kResume) {
    ++self.counters_.resumes;
  }
  if (u.fault) u.rec.fault = to_string(u.fault->kind);
  // The device decided which queues are runnable; the HWS follows that even if it fails.
  std::set<QueueKey> next(u.runnable.begin(), u.runnable.end());
  for (auto& [k, q] : queues) q.want_runnable = next.count(k) > 0;

  if (u.fault && u.fault->kind == FaultKind::kEio) {
    finish_update(-EIO);
    return;
  }
  if (u.fault && u.fault->kind == FaultKind::kTimeout) {
    schedule(now() + self.profile_.preemption_timeout_ns, EvKind::kFailTimeout, u.seq);
    return;
  }
  schedule(now() + self.profile_.unmap_latency_ns + grace_packet_ns(u), EvKind::kUnmapStart, u.seq);
}

SimTime GpuEngine::Impl::grace_packet_ns(const Update& u) const {
  return u.grace == 0xffffffffu ? 0 : self.profile_.grace_packet_ns;
}

Update* GpuEngine::Impl::active(uint64_t seq) {
  if (!update_active || updates.empty() || updates.front().seq != seq) return nullptr;
  return &updates.front();
}

void GpuEngine::Impl::on_unmap_start(uint64_t seq) {
  Update* u = active(seq);
  if (!u) return;
  u->rec.unmap_started_ns = now();
  if (u->fault && u->fault->kind == FaultKind::kHang) {
    // A wave ignores the trap: nothing launches any more, and the save never completes.
    phase = Phase::kHung;
    schedule(u->started + self.profile_.preemption_timeout_ns, EvKind::kFailTimeout, seq);
    return;
  }
  phase = Phase::kDraining;
  if (cohorts.empty()) {
    begin_save();
    return;
  }
  schedule(now() + self.profile_.grace_ns(u->grace), EvKind::kGraceExpired, seq);
}

void GpuEngine::Impl::on_grace_expired(uint64_t seq) {
  if (!active(seq) || phase != Phase::kDraining) return;
  begin_save();
}

void GpuEngine::Impl::begin_save() {
  Update& u = updates.front();
  const Frozen f = freeze([](const Queue&) { return true; });
  SimTime save = self.profile_.save_ns(f.bytes);
  if (u.fault && u.fault->kind == FaultKind::kSlowSave)
    save = static_cast<SimTime>(static_cast<double>(save) * u.fault->factor);
  u.rec.waves_saved = f.waves;
  u.rec.bytes_saved = f.bytes;
  u.rec.save_ns = save;
  self.counters_.waves_saved += f.waves;
  phase = Phase::kSaving;
  schedule(now() + save, EvKind::kSaveDone, u.seq);
}

void GpuEngine::Impl::apply_runnable() {
  for (auto& [k, q] : queues) q.runnable = q.want_runnable;
  compute_mapping();
}

void GpuEngine::Impl::fill_counts(RunlistRecord& rec) const {
  rec.queues_runnable = rec.queues_mapped = rec.queues_suspended = 0;
  for (const auto& [k, q] : queues) {
    rec.queues_runnable += q.runnable;
    rec.queues_mapped += q.mapped;
    rec.queues_suspended += !q.runnable;
  }
}

void GpuEngine::Impl::on_save_done(uint64_t seq) {
  Update* u = active(seq);
  if (!u) return;
  u->rec.stopped_ns = now();
  apply_runnable();
  fill_counts(u->rec);
  const Frozen f = saved_of_mapped();
  u->rec.waves_restored = f.waves;
  u->rec.bytes_restored = f.bytes;
  u->rec.restore_ns = self.profile_.restore_ns(f.bytes);
  self.counters_.waves_restored += f.waves;
  phase = Phase::kMapping;
  schedule(now() + grace_packet_ns(*u) + self.profile_.map_latency_ns + u->rec.restore_ns,
           EvKind::kMapDone, seq);
}

void GpuEngine::Impl::on_map_done(uint64_t seq) {
  Update* u = active(seq);
  if (!u) return;
  phase = Phase::kRunning;
  // After a SUSPEND, KFD flushes HDP and waits for a work item that copies each queue's
  // wave-state information to user memory: the queues run again, the ioctl returns later.
  if (u->rec.kind == RunlistKind::kSuspend && self.profile_.suspend_copy_ns > 0) {
    u->rec.resumed_ns = now();
    resume_everything();
    schedule(now() + self.profile_.suspend_copy_ns, EvKind::kCopyDone, seq);
    return;
  }
  finish_update(0);
}

void GpuEngine::Impl::on_copy_done(uint64_t seq) {
  if (!active(seq)) return;
  finish_update(0);
}

void GpuEngine::Impl::on_fail_timeout(uint64_t seq) {
  Update* u = active(seq);
  if (!u) return;
  // KFD gives up waiting; the firmware recovers and runs the runlist it was given. Waves that
  // were still resident are kept as saved state, so no work is lost.
  u->rec.stopped_ns = now();
  freeze([](const Queue& q) { return !q.want_runnable; });
  phase = Phase::kRunning;
  finish_update(-ETIME);
}

void GpuEngine::Impl::finish_update(int result) {
  Update u = std::move(updates.front());
  updates.pop_front();
  update_active = false;
  if (result == 0 || result == -ETIME) {
    if (result == -ETIME) {
      apply_runnable();
      fill_counts(u.rec);
    }
    if (u.rec.resumed_ns < 0) u.rec.resumed_ns = now();
  } else {
    fill_counts(u.rec);
  }
  u.rec.result = result;
  ++self.counters_.runlist_completed;
  self.records_.push_back(u.rec);
  while (self.records_.size() > opt.max_records) self.records_.pop_front();
  if (u.done) u.done(result);
  resume_everything();
  start_next_update();
}

void GpuEngine::Impl::resume_everything() {
  if (phase != Phase::kRunning) return;
  std::vector<QueueKey> keys;
  for (auto& [k, q] : queues) keys.push_back(k);
  for (const auto& k : keys) {
    auto it = queues.find(k);
    if (it != queues.end()) try_start(it->second);
  }
  for (uint32_t x = 0; x < xccs.size(); ++x) dispatch(x);
  recheck_barriers();
}

void GpuEngine::Impl::on_quantum(uint64_t gen) {
  if (gen != quantum_gen) return;
  quantum_armed = false;
  std::size_t runnable = 0;
  for (const auto& [k, q] : queues) runnable += q.runnable;
  if (runnable <= self.profile_.hqd_slots()) return;
  if (phase != Phase::kRunning || update_active) {
    quantum_armed = true;
    schedule(now() + self.profile_.oversubscription_quantum_ns, EvKind::kQuantum, ++quantum_gen);
    return;
  }
  ++self.counters_.quantum_rotations;
  std::map<QueueKey, bool> before;
  for (const auto& [k, q] : queues) before[k] = q.mapped;
  rotation += self.profile_.hqd_slots();
  compute_mapping();
  const Frozen out = freeze([&](const Queue& q) { return before[q.key] && !q.mapped; });
  self.counters_.waves_saved += out.waves;
  const SimTime save = self.profile_.save_ns(out.bytes);
  for (auto& [k, q] : queues) {
    if (!q.mapped || before[k]) continue;
    uint64_t in_waves = 0;
    std::vector<uint64_t> in_bytes(xccs.size(), 0);
    if (q.kernel) {
      auto kit = kernels.find(q.kernel);
      if (kit != kernels.end())
        for (const auto& s : kit->second.saved) {
          in_waves += s.waves;
          in_bytes[s.xcc] += s.bytes;
        }
    }
    self.counters_.waves_restored += in_waves;
    q.blocked_until = now() + save + self.profile_.restore_ns(bounded_bytes(in_bytes));
    if (q.blocked_until > now()) schedule(q.blocked_until, EvKind::kWake);
  }
  resume_everything();
}

}  // namespace gpreempt::sim::gpu
