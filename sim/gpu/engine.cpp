#include "sim/gpu/engine.h"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>

namespace gpreempt::sim::gpu {

namespace {

enum class EvKind : uint8_t {
  kCohortEnd,     // a = cohort id
  kJobStart,      // a = queue serial, b = job serial: packet processed, job may run
  kUnmapStart,    // a = update seq
  kGraceExpired,  // a = update seq
  kSaveDone,      // a = update seq
  kMapDone,       // a = update seq
  kCopyDone,      // a = update seq: a SUSPEND's wave-state copy finished, the ioctl returns
  kFailTimeout,   // a = update seq: a timeout/hang fault ends with -ETIME
  kQuantum,       // a = quantum generation
  kWake,          // dispatch again (a queue's restore finished)
  kDispatch,      // a = XCC: hand out the slots freed by every cohort that ended at this instant
};

struct Event {
  SimTime t;
  uint64_t seq;
  EvKind kind;
  uint64_t a;
  uint64_t b;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

enum class Phase { kRunning, kDraining, kSaving, kMapping, kHung };

struct Saved {
  uint32_t xcc;
  uint64_t wgs;
  uint32_t waves;
  uint64_t bytes;  // its wave state in the context-save area
  SimTime remaining;
};

struct Kernel {
  uint64_t id = 0;
  QueueKey queue;
  int pool = -1;     // CU-mask pool of its queue (-1: every CU)
  uint32_t group = 0;
  uint32_t waves_per_wg = 1;
  uint64_t wg_units = kUnitsPerWaveSlot;  // CU share of one workgroup (cwsr_model.h)
  uint64_t wg_bytes = 0;                  // CWSR state of one resident workgroup
  SimTime wg_ns = 0;
  uint64_t total_wgs = 0;
  uint64_t outstanding = 0;  // workgroups not finished
  bool launched = false;
  std::vector<uint64_t> pending;  // per XCC, not yet dispatched
  std::vector<Saved> saved;       // preempted cohorts, progress kept
};

struct Cohort {
  uint64_t kernel;
  uint32_t xcc;
  uint64_t wgs;
  uint32_t waves;
  uint64_t units;
  uint64_t bytes;
  SimTime end;
  int pool;
  uint32_t group;
};

struct Job {
  bool is_kernel = true;
  KernelSpec spec;
  Occupancy occ;
  BarrierReady ready;
  JobDone done;
  SimTime queued = 0;
  uint64_t serial = 0;
};

struct Queue {
  QueueKey key;
  uint32_t priority = 0;
  int pipe_priority = 0;
  uint64_t serial = 0;  // creation order
  bool want_runnable = false;
  bool runnable = false;
  bool mapped = false;
  SimTime blocked_until = 0;
  std::deque<Job> jobs;
  bool head_started = false;   // the head job's packet is being processed or runs
  bool barrier_waiting = false;
  SimTime head_started_at = 0;
  uint64_t kernel = 0;         // id of the head kernel once created, 0 otherwise
  uint64_t completed = 0;
  int pool = -1;               // CU mask (set_cu_mask): index into Impl::pools, -1 = all CUs
  uint32_t group = 0;          // set_queue_group: resident time is accounted per group
};

// The CUs a CU mask leaves to its queues on every XCC, and what they have free there. Masks are
// modelled as CU ranges per XCC; queues with the same range share one pool.
struct PoolDef {
  uint32_t first_cu = 0;
  uint32_t cus = 0;
};
struct PoolFree {
  uint64_t units = 0;  // free CU capacity, kUnitsPerWaveSlot per wave slot
  uint64_t wgs = 0;
  uint64_t peak_units = 0;
};

struct GroupBusy {
  uint64_t live = 0;  // resident cohorts
  SimTime since = 0;
  SimTime busy = 0;
};

struct Xcc {
  uint64_t free_units = 0;  // kUnitsPerWaveSlot per wave slot (cwsr_model.h)
  uint64_t free_wgs = 0;
  std::vector<PoolFree> pools;
  uint64_t rr = 0;
  bool dispatch_pending = false;
};

struct Update {
  uint64_t seq = 0;
  bool internal = false;
  std::optional<RunlistKind> kind;
  uint32_t grace = 0xffffffffu;
  std::vector<QueueKey> runnable;
  std::function<void(int)> done;
  std::optional<FaultRule> fault;
  SimTime started = 0;  // when the HWS began working on it (earlier requests run first)
  RunlistRecord rec;
};

// MQD pipe priority as KFD maps queue priority 0..15 (docs/kfd-interface.md#gfx9-mqd).
int pipe_priority_of(uint32_t queue_priority) {
  if (queue_priority <= 6) return 0;
  if (queue_priority <= 10) return 1;
  return 2;
}

}  // namespace

struct GpuEngine::Impl {
  GpuEngine& self;
  EngineOptions opt;
  std::mt19937_64 rng;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  uint64_t event_seq = 0;
  std::map<QueueKey, Queue> queues;
  std::map<uint64_t, QueueKey> queue_by_serial;
  uint64_t next_queue_serial = 1;
  uint64_t next_job_serial = 1;
  std::unordered_map<uint64_t, Kernel> kernels;
  uint64_t next_kernel = 1;
  std::unordered_map<uint64_t, Cohort> cohorts;
  uint64_t next_cohort = 1;
  std::vector<Xcc> xccs;
  Phase phase = Phase::kRunning;
  std::deque<Update> updates;
  bool update_active = false;
  uint64_t next_update = 1;
  uint32_t suspend_count = 0;
  uint64_t rotation = 0;
  uint64_t quantum_gen = 0;
  bool quantum_armed = false;
  std::vector<PoolDef> pools;
  std::map<uint32_t, GroupBusy> groups;

  Impl(GpuEngine& s, EngineOptions o) : self(s), opt(std::move(o)), rng(opt.seed) {
    const auto& p = self.profile_;
    xccs.resize(p.num_xcc);
    for (auto& x : xccs) {
      x.free_units = static_cast<uint64_t>(p.cus_per_xcc) * p.max_waves_per_cu * kUnitsPerWaveSlot;
      x.free_wgs = static_cast<uint64_t>(p.cus_per_xcc) * p.max_workgroups_per_cu;
    }
  }

  SimTime now() const { return self.now_; }

  void schedule(SimTime t, EvKind k, uint64_t a = 0, uint64_t b = 0) {
    events.push(Event{t, event_seq++, k, a, b});
  }

  double uniform() { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); }

  // ---- jobs -------------------------------------------------------------------------------

  bool can_run(const Queue& q) const {
    return phase == Phase::kRunning && q.runnable && q.mapped && q.blocked_until <= now();
  }

  void try_start(Queue& q) {
    if (!can_run(q) || q.jobs.empty() || q.head_started) return;
    Job& j = q.jobs.front();
    q.head_started = true;
    q.head_started_at = now();
    schedule(now() + self.profile_.packet_overhead_ns, EvKind::kJobStart, q.serial, j.serial);
  }

  void on_job_start(uint64_t queue_serial, uint64_t job_serial) {
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

  void complete_head(Queue& q) {
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

  void finish_kernel(uint64_t id) {
    auto it = kernels.find(id);
    const QueueKey key = it->second.queue;
    kernels.erase(it);
    auto q = queues.find(key);
    if (q != queues.end()) complete_head(q->second);
  }

  void check_barrier(Queue& q) {
    if (!q.barrier_waiting || !can_run(q)) return;
    if (q.jobs.front().ready && !q.jobs.front().ready()) return;
    complete_head(q);
  }

  void recheck_barriers() {
    // complete_head may change the map; collect first.
    std::vector<QueueKey> waiting;
    for (auto& [k, q] : queues)
      if (q.barrier_waiting) waiting.push_back(k);
    for (const auto& k : waiting) {
      auto it = queues.find(k);
      if (it != queues.end()) check_barrier(it->second);
    }
  }

  // ---- compute units ----------------------------------------------------------------------

  // Workgroups of `k` (wg_units each) that still fit on XCC x, its CU mask included.
  uint64_t fit(uint32_t x, const Kernel& k) const {
    const Xcc& xc = xccs[x];
    uint64_t n = std::min(xc.free_wgs, xc.free_units / k.wg_units);
    if (k.pool >= 0) {
      const PoolFree& p = xc.pools[static_cast<std::size_t>(k.pool)];
      n = std::min({n, p.wgs, p.units / k.wg_units});
    }
    return n;
  }
  void take_slots(uint32_t x, int pool, uint64_t wgs, uint64_t units) {
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
  void give_slots(uint32_t x, int pool, uint64_t wgs, uint64_t units) {
    Xcc& xc = xccs[x];
    xc.free_wgs += wgs;
    xc.free_units += units;
    if (pool >= 0) {
      PoolFree& p = xc.pools[static_cast<std::size_t>(pool)];
      p.wgs += wgs;
      p.units += units;
    }
  }
  void group_live(uint32_t group, int delta) {
    if (group == 0) return;
    GroupBusy& g = groups[group];
    if (delta > 0 && g.live++ == 0) g.since = now();
    if (delta < 0 && --g.live == 0) g.busy += now() - g.since;
  }
  SimTime group_busy(uint32_t group) const {
    auto it = groups.find(group);
    if (it == groups.end()) return 0;
    return it->second.busy + (it->second.live ? now() - it->second.since : 0);
  }

  struct Contender {
    Queue* q;
    Kernel* k;
  };

  void start_cohort(Kernel& k, uint32_t x, uint64_t wgs, SimTime duration) {
    const uint64_t waves = wgs * k.waves_per_wg;
    const uint64_t units = wgs * k.wg_units;
    take_slots(x, k.pool, wgs, units);
    group_live(k.group, +1);
    const uint64_t id = next_cohort++;
    cohorts.emplace(id, Cohort{k.id, x, wgs, static_cast<uint32_t>(waves), units, wgs * k.wg_bytes,
                               now() + duration, k.pool, k.group});
    schedule(now() + duration, EvKind::kCohortEnd, id);
  }

  SimTime cohort_duration(const Kernel& k) {
    if (opt.wg_jitter <= 0) return k.wg_ns;
    return static_cast<SimTime>(static_cast<double>(k.wg_ns) * (1.0 + opt.wg_jitter * uniform()));
  }

  // Give free slots of XCC x to waiting workgroups: higher pipe/queue priority first, equal
  // priorities share round-robin; preempted (saved) workgroups of a kernel go before new ones.
  void dispatch(uint32_t x) {
    if (phase != Phase::kRunning) return;
    const Xcc& xc = xccs[x];
    if (xc.free_wgs == 0 || xc.free_units == 0) return;
    std::vector<Contender> c;
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
    std::stable_sort(c.begin(), c.end(), [](const Contender& a, const Contender& b) {
      if (a.q->pipe_priority != b.q->pipe_priority) return a.q->pipe_priority > b.q->pipe_priority;
      return a.q->priority > b.q->priority;
    });
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

  void share_level(uint32_t x, std::span<Contender> level) {
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
    std::vector<uint64_t> alloc(n, 0);
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

  void on_cohort_end(uint64_t id) {
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

  // Move live cohorts of the selected queues into their kernels' save lists.
  struct Frozen {
    uint64_t waves = 0;
    uint64_t bytes = 0;
  };
  Frozen freeze(const std::function<bool(const Queue&)>& which) {
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

  // Saved state per XCC never exceeds its CUs' context-save areas. Occupancy already keeps it
  // there (cwsr_model.cpp); the bound makes the invariant explicit rather than assumed.
  uint64_t bounded_bytes(const std::vector<uint64_t>& xcc_bytes) const {
    const uint64_t cap = static_cast<uint64_t>(self.profile_.cus_per_xcc) * cwsr_bytes_per_cu(self.profile_);
    uint64_t total = 0;
    for (uint64_t b : xcc_bytes) total += std::min(b, cap);
    return total;
  }

  Frozen saved_of_mapped() const {
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

  // ---- runlist ----------------------------------------------------------------------------

  // Which runnable queues get one of the hardware slots: priority first, round-robin rotation
  // among the rest when oversubscribed.
  void compute_mapping() {
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

  void enqueue_update(Update u) {
    u.seq = next_update++;
    u.rec.requested_ns = now();
    updates.push_back(std::move(u));
    start_next_update();
  }

  RunlistKind classify(const Update& u) const {
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

  void start_next_update() {
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

  // A grace period other than the default is written into CP_IQ_WAIT_TIME2.SCH_WAVE by one HIQ
  // packet before the unmap and put back by another after it (kfd_device_queue_manager.c).
  SimTime grace_packet_ns(const Update& u) const {
    return u.grace == 0xffffffffu ? 0 : self.profile_.grace_packet_ns;
  }

  Update* active(uint64_t seq) {
    if (!update_active || updates.empty() || updates.front().seq != seq) return nullptr;
    return &updates.front();
  }

  void on_unmap_start(uint64_t seq) {
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

  void on_grace_expired(uint64_t seq) {
    if (!active(seq) || phase != Phase::kDraining) return;
    begin_save();
  }

  void begin_save() {
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

  void apply_runnable() {
    for (auto& [k, q] : queues) q.runnable = q.want_runnable;
    compute_mapping();
  }

  void fill_counts(RunlistRecord& rec) const {
    rec.queues_runnable = rec.queues_mapped = rec.queues_suspended = 0;
    for (const auto& [k, q] : queues) {
      rec.queues_runnable += q.runnable;
      rec.queues_mapped += q.mapped;
      rec.queues_suspended += !q.runnable;
    }
  }

  void on_save_done(uint64_t seq) {
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

  void on_map_done(uint64_t seq) {
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

  void on_copy_done(uint64_t seq) {
    if (!active(seq)) return;
    finish_update(0);
  }

  void on_fail_timeout(uint64_t seq) {
    Update* u = active(seq);
    if (!u) return;
    // KFD gives up waiting; the firmware recovers and runs the runlist it was given. Waves that
    // were still resident are kept as saved state, so no work is lost.
    u->rec.stopped_ns = now();
    freeze([](const Queue& q) { return !q.want_runnable; });
    phase = Phase::kRunning;
    finish_update(-ETIME);
  }

  void finish_update(int result) {
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

  void resume_everything() {
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

  void on_quantum(uint64_t gen) {
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

  void handle(const Event& e) {
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
};

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

void GpuEngine::set_runnable_instant(const std::vector<QueueKey>& runnable) {
  auto& I = *impl_;
  std::set<QueueKey> next(runnable.begin(), runnable.end());
  I.freeze([&](const Queue& q) { return next.count(q.key) == 0; });
  for (auto& [k, q] : I.queues) q.want_runnable = next.count(k) > 0;
  if (I.phase == Phase::kRunning && !I.update_active) I.apply_runnable();
  I.resume_everything();
}

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
