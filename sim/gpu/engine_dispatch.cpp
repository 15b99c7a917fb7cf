// Queues, CU slots and cohorts: which packets start, where their workgroups run and when they end.
#include "sim/gpu/engine_impl.h"

#include <algorithm>
#include <limits>
#include <set>
#include <span>

namespace gpreempt::sim::gpu {

void GpuEngine::Impl::try_start(Queue& q) {
  if (!can_run(q) || q.jobs.empty() || q.head_started) return;
  Job& j = q.jobs.front();
  q.head_started = true;
  q.head_started_at = now();
  schedule(now() + self.profile_.packet_overhead_ns, EvKind::kJobStart, q.serial, j.serial);
}

void GpuEngine::Impl::on_job_start(uint64_t queue_serial, uint64_t job_serial) {
  auto qs = queue_by_serial.find(queue_serial);
  if (qs == queue_by_serial.end()) return;
  Queue& q = queues.at(qs->second);
  if (q.jobs.empty() || q.jobs.front().serial != job_serial) return;
  Job& j = q.jobs.front();
  if (!j.is_kernel) {
    q.barrier_waiting = true;
    check_barrier(q);
    return;
  }
  const auto& p = self.profile_;
  Kernel k;
  k.id = next_kernel++;
  k.queue = q.key;
  k.pool = q.pool;
  k.group = q.group;
  k.waves_per_wg = std::max<uint32_t>(j.spec.waves_per_workgroup(p.wave_size), 1);
  k.wg_units = j.occ.wg_units;
  k.wg_bytes = j.occ.wg_bytes;
  k.wg_ns = std::max<SimTime>(j.spec.wg_cost_ns, 1);
  k.total_wgs = j.spec.workgroups();
  k.outstanding = k.total_wgs;
  k.launched = true;
  // The dispatcher deals workgroups round-robin to the XCCs (SPX mode).
  k.pending.assign(p.num_xcc, 0);
  for (uint32_t x = 0; x < p.num_xcc; ++x)
    k.pending[x] = k.total_wgs / p.num_xcc + (x < k.total_wgs % p.num_xcc ? 1 : 0);
  q.kernel = k.id;
  const uint64_t id = k.id;
  kernels.emplace(id, std::move(k));
  if (kernels.at(id).outstanding == 0) {
    finish_kernel(id);
    return;
  }
  for (uint32_t x = 0; x < p.num_xcc; ++x)
    if (kernels.at(id).pending[x] > 0) dispatch(x);
}

void GpuEngine::Impl::complete_head(Queue& q) {
  Job j = std::move(q.jobs.front());
  q.jobs.pop_front();
  q.head_started = false;
  q.barrier_waiting = false;
  q.kernel = 0;
  ++q.completed;
  if (j.is_kernel) ++self.counters_.kernels_completed;
  else ++self.counters_.barriers_completed;
  const JobResult r{j.queued, q.head_started_at, now()};
  const QueueKey key = q.key;
  if (j.done) j.done(r);
  // The callback may have removed the queue (the process went away).
  auto it = queues.find(key);
  if (it != queues.end()) try_start(it->second);
  recheck_barriers();
}

void GpuEngine::Impl::finish_kernel(uint64_t id) {
  auto it = kernels.find(id);
  const QueueKey key = it->second.queue;
  kernels.erase(it);
  auto q = queues.find(key);
  if (q != queues.end()) complete_head(q->second);
}

void GpuEngine::Impl::check_barrier(Queue& q) {
  if (!q.barrier_waiting || !can_run(q)) return;
  if (q.jobs.front().ready && !q.jobs.front().ready()) return;
  complete_head(q);
}

void GpuEngine::Impl::recheck_barriers() {
  // complete_head may change the map; collect first.
  std::vector<QueueKey> waiting;
  for (auto& [k, q] : queues)
    if (q.barrier_waiting) waiting.push_back(k);
  for (const auto& k : waiting) {
    auto it = queues.find(k);
    if (it != queues.end()) check_barrier(it->second);
  }
}

uint64_t GpuEngine::Impl::fit(uint32_t x, const Kernel& k) const {
  const Xcc& xc = xccs[x];
  uint64_t n = std::min(xc.free_wgs, xc.free_units / k.wg_units);
  if (k.pool >= 0) {
    const PoolFree& p = xc.pools[static_cast<std::size_t>(k.pool)];
    n = std::min({n, p.wgs, p.units / k.wg_units});
  }
  return n;
}

void GpuEngine::Impl::take_slots(uint32_t x, int pool, uint64_t wgs, uint64_t units) {
  Xcc& xc = xccs[x];
  xc.free_wgs -= wgs;
  xc.free_units -= units;
  if (pool >= 0) {
    PoolFree& p = xc.pools[static_cast<std::size_t>(pool)];
    p.wgs -= wgs;
    p.units -= units;
    const PoolDef& d = pools[static_cast<std::size_t>(pool)];
    const uint64_t cap = static_cast<uint64_t>(d.cus) * self.profile_.max_waves_per_cu * kUnitsPerWaveSlot;
    p.peak_units = std::max(p.peak_units, cap - p.units);
  }
}

void GpuEngine::Impl::give_slots(uint32_t x, int pool, uint64_t wgs, uint64_t units) {
  Xcc& xc = xccs[x];
  xc.free_wgs += wgs;
  xc.free_units += units;
  if (pool >= 0) {
    PoolFree& p = xc.pools[static_cast<std::size_t>(pool)];
    p.wgs += wgs;
    p.units += units;
  }
}

void GpuEngine::Impl::group_live(uint32_t group, int delta) {
  if (group == 0) return;
  GroupBusy& g = groups[group];
  if (delta > 0 && g.live++ == 0) g.since = now();
  if (delta < 0 && --g.live == 0) g.busy += now() - g.since;
}

SimTime GpuEngine::Impl::group_busy(uint32_t group) const {
  auto it = groups.find(group);
  if (it == groups.end()) return 0;
  return it->second.busy + (it->second.live ? now() - it->second.since : 0);
}

void GpuEngine::Impl::start_cohort(Kernel& k, uint32_t x, uint64_t wgs, SimTime duration) {
  const uint64_t waves = wgs * k.waves_per_wg;
  const uint64_t units = wgs * k.wg_units;
  take_slots(x, k.pool, wgs, units);
  group_live(k.group, +1);
  const uint64_t id = next_cohort++;
  cohorts.emplace(id, Cohort{k.id, x, wgs, static_cast<uint32_t>(waves), units, wgs * k.wg_bytes,
                             now() + duration, k.pool, k.group});
  schedule(now() + duration, EvKind::kCohortEnd, id);
}

SimTime GpuEngine::Impl::cohort_duration(const Kernel& k) {
  if (opt.wg_jitter <= 0) return k.wg_ns;
  return static_cast<SimTime>(static_cast<double>(k.wg_ns) * (1.0 + opt.wg_jitter * uniform()));
}

void GpuEngine::Impl::dispatch(uint32_t x) {
  if (phase != Phase::kRunning) return;
  const Xcc& xc = xccs[x];
  if (xc.free_wgs == 0 || xc.free_units == 0) return;
  std::vector<Contender>& c = contenders;
  c.clear();
  for (auto& [key, q] : queues) {
    if (!can_run(q) || q.kernel == 0) continue;
    auto it = kernels.find(q.kernel);
    if (it == kernels.end()) continue;
    Kernel& k = it->second;
    bool has_saved = false;
    for (const auto& s : k.saved) has_saved |= (s.xcc == x);
    if (k.pending[x] == 0 && !has_saved) continue;
    c.push_back({&q, &k});
  }
  if (c.empty()) return;
  // Highest pipe priority, then queue priority, first; equals keep the queues' order. An
  // insertion sort: a handful of queues, and std::stable_sort allocates a buffer every call.
  const auto before = [](const Contender& a, const Contender& b) {
    if (a.q->pipe_priority != b.q->pipe_priority) return a.q->pipe_priority > b.q->pipe_priority;
    return a.q->priority > b.q->priority;
  };
  for (std::size_t i = 1; i < c.size(); ++i)
    for (std::size_t j = i; j > 0 && before(c[j], c[j - 1]); --j) std::swap(c[j], c[j - 1]);
  std::size_t i = 0;
  while (i < c.size() && xccs[x].free_wgs > 0 && xccs[x].free_units > 0) {
    std::size_t j = i;
    while (j < c.size() && c[j].q->pipe_priority == c[i].q->pipe_priority &&
           c[j].q->priority == c[i].q->priority)
      ++j;
    share_level(x, std::span<Contender>(c.data() + i, j - i));
    i = j;
  }
}

void GpuEngine::Impl::share_level(uint32_t x, std::span<Contender> level) {
  Xcc& xc = xccs[x];
  // Restore saved cohorts first: their waves resume where they stopped.
  for (auto& ct : level) {
    auto& saved = ct.k->saved;
    for (auto it = saved.begin(); it != saved.end();) {
      if (it->xcc == x && it->wgs <= fit(x, *ct.k)) {
        const uint64_t wgs = it->wgs;
        const SimTime rem = it->remaining;
        it = saved.erase(it);
        start_cohort(*ct.k, x, wgs, rem);
      } else {
        ++it;
      }
    }
  }
  const std::size_t n = level.size();
  std::vector<uint64_t>& alloc = grants;
  alloc.assign(n, 0);
  const std::size_t start = static_cast<std::size_t>(xc.rr++ % n);
  bool progress = true;
  while (progress && xc.free_wgs > 0 && xc.free_units > 0) {
    progress = false;
    uint64_t fair = 0;
    {
      // Workgroups this round may hand each contender: an equal split of what is free.
      uint64_t max_units = 1;
      for (auto& ct : level) max_units = std::max<uint64_t>(max_units, ct.k->wg_units);
      fair = std::max<uint64_t>(1, std::min(xc.free_wgs, xc.free_units / max_units) / n);
    }
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t idx = (start + r) % n;
      Kernel& k = *level[idx].k;
      const uint64_t avail = k.pending[x];
      if (avail == 0) continue;
      const uint64_t give = std::min({avail, fair, fit(x, k)});
      if (give == 0) continue;
      k.pending[x] -= give;
      alloc[idx] += give;
      take_slots(x, k.pool, give, give * k.wg_units);
      progress = true;
    }
  }
  for (std::size_t idx = 0; idx < n; ++idx) {
    if (alloc[idx] == 0) continue;
    Kernel& k = *level[idx].k;
    // start_cohort takes the slots itself; give back what the loop reserved.
    give_slots(x, k.pool, alloc[idx], alloc[idx] * k.wg_units);
    start_cohort(k, x, alloc[idx], cohort_duration(k));
  }
}

void GpuEngine::Impl::on_cohort_end(uint64_t id) {
  auto it = cohorts.find(id);
  if (it == cohorts.end()) return;  // frozen or dropped since
  const Cohort c = it->second;
  cohorts.erase(it);
  Xcc& xc = xccs[c.xcc];
  give_slots(c.xcc, c.pool, c.wgs, c.units);
  group_live(c.group, -1);
  self.counters_.workgroups_completed += c.wgs;
  auto k = kernels.find(c.kernel);
  if (k != kernels.end()) {
    k->second.outstanding -= c.wgs;
    if (k->second.outstanding == 0) finish_kernel(c.kernel);
  }
  if (phase == Phase::kDraining && cohorts.empty()) begin_save();
  // Slots freed at one instant are handed out together, after every cohort ending now: one
  // cohort per contender instead of one per freed cohort (which would fragment without end).
  if (!xc.dispatch_pending) {
    xc.dispatch_pending = true;
    schedule(now(), EvKind::kDispatch, c.xcc);
  }
}

}  // namespace gpreempt::sim::gpu
