// The GPU model's state (GpuEngine::Impl) and its types, shared by the files that run it:
// engine.cpp (the public API and the event loop), engine_dispatch.cpp (queues, CU slots and the
// cohorts of workgroups: what runs where) and engine_runlist.cpp (the hardware scheduler's runlist:
// unmap, grace, CWSR save, map and restore, and its time slices). Internal to sim/gpu.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/gpu/engine.h"
#include "sim/gpu/event_queue.h"

namespace gpreempt::sim::gpu {

namespace engine_detail {

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
inline int pipe_priority_of(uint32_t queue_priority) {
  if (queue_priority <= 6) return 0;
  if (queue_priority <= 10) return 1;
  return 2;
}

}  // namespace engine_detail

using namespace engine_detail;

struct GpuEngine::Impl {
  GpuEngine& self;
  EngineOptions opt;
  std::mt19937_64 rng;
  EventQueue<Event, SimTime> events;
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

  struct Contender {
    Queue* q;
    Kernel* k;
  };
  // dispatch()'s contenders and share_level()'s grants, kept between calls: a contended run
  // dispatches once per cohort end, and allocating them each time was a tenth of its cost.
  std::vector<Contender> contenders;
  std::vector<uint64_t> grants;
  // What a freeze moved into the save lists.
  struct Frozen {
    uint64_t waves = 0;
    uint64_t bytes = 0;
  };

  SimTime now() const { return self.now_; }
  void schedule(SimTime t, EvKind k, uint64_t a = 0, uint64_t b = 0) {
    events.push(Event{t, event_seq++, k, a, b}, now());
  }
  double uniform() { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); }
  // ---- queues, CU slots, cohorts (engine_dispatch.cpp) ---------------------------------
  bool can_run(const Queue& q) const {
    return phase == Phase::kRunning && q.runnable && q.mapped && q.blocked_until <= now();
  }
  void try_start(Queue& q);
  void on_job_start(uint64_t queue_serial, uint64_t job_serial);
  void complete_head(Queue& q);
  void finish_kernel(uint64_t id);
  void check_barrier(Queue& q);
  void recheck_barriers();
  // Workgroups of `k` (wg_units each) that still fit on XCC x, its CU mask included.
  uint64_t fit(uint32_t x, const Kernel& k) const;
  void take_slots(uint32_t x, int pool, uint64_t wgs, uint64_t units);
  void give_slots(uint32_t x, int pool, uint64_t wgs, uint64_t units);
  void group_live(uint32_t group, int delta);
  SimTime group_busy(uint32_t group) const;
  void start_cohort(Kernel& k, uint32_t x, uint64_t wgs, SimTime duration);
  SimTime cohort_duration(const Kernel& k);
  // Give free slots of XCC x to waiting workgroups: higher pipe/queue priority first, equal
  // priorities share round-robin; preempted (saved) workgroups of a kernel go before new ones.
  void dispatch(uint32_t x);
  void share_level(uint32_t x, std::span<Contender> level);
  void on_cohort_end(uint64_t id);
  // ---- the runlist (engine_runlist.cpp) --------------------------------------------------
  // Move live cohorts of the selected queues into their kernels' save lists.
  Frozen freeze(const std::function<bool(const Queue&)>& which);
  // Saved state per XCC never exceeds its CUs' context-save areas. Occupancy already keeps it
  // there (cwsr_model.cpp); the bound makes the invariant explicit rather than assumed.
  uint64_t bounded_bytes(const std::vector<uint64_t>& xcc_bytes) const;
  Frozen saved_of_mapped() const;
  // Which runnable queues get one of the hardware slots: priority first, round-robin rotation
  // among the rest when oversubscribed.
  void compute_mapping();
  void enqueue_update(Update u);
  RunlistKind classify(const Update& u) const;
  void start_next_update();
  // A grace period other than the default is written into CP_IQ_WAIT_TIME2.SCH_WAVE by one HIQ
  // packet before the unmap and put back by another after it (kfd_device_queue_manager.c).
  SimTime grace_packet_ns(const Update& u) const;
  Update* active(uint64_t seq);
  void on_unmap_start(uint64_t seq);
  void on_grace_expired(uint64_t seq);
  void begin_save();
  void apply_runnable();
  void fill_counts(RunlistRecord& rec) const;
  void on_save_done(uint64_t seq);
  void on_map_done(uint64_t seq);
  void on_copy_done(uint64_t seq);
  void on_fail_timeout(uint64_t seq);
  void finish_update(int result);
  void resume_everything();
  void on_quantum(uint64_t gen);
  void handle(const Event& e);
};

}  // namespace gpreempt::sim::gpu
