// The timing model of one simulated GPU: compute units per XCC shared by the mapped queues, the
// HWS runlist with its hardware queue slots and time slicing, and the whole-device unmap/remap
// with grace period and CWSR save/restore that every SUSPEND/RESUME costs.
//
// Discrete-event and clock-free: the owner moves time forward with advance_to(t) (wall-clock ns
// in the daemon, event times in the discrete-event driver) and asks next_event_time() when it
// next needs to. Nothing here reads a clock, sleeps or touches memory of other processes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/gpu/faults.h"
#include "sim/gpu/kernel.h"
#include "sim/gpu/profile.h"
#include "sim/gpu/runlist_record.h"

namespace gpreempt::sim::gpu {

struct QueueKey {
  int pid = 0;
  uint32_t queue_id = 0;
  auto operator<=>(const QueueKey&) const = default;
};

struct JobResult {
  SimTime queued = 0;   // handed to the engine
  SimTime started = 0;  // packet processed / first workgroup could launch
  SimTime finished = 0;
};
using JobDone = std::function<void(const JobResult&)>;
// A barrier-AND packet's condition, evaluated whenever it may have changed.
using BarrierReady = std::function<bool()>;

struct EngineOptions {
  uint64_t seed = 1;
  // Each workgroup cohort lasts wg_cost * (1 + jitter * u), u uniform in [0,1) from the seed.
  double wg_jitter = 0.0;
  FaultPlan faults;
  // KFD refreshes the whole runlist when a queue is created or destroyed, too.
  bool remap_on_queue_change = true;
  std::size_t max_records = 100000;
};

struct EngineCounters {
  uint64_t kernels_completed = 0;
  uint64_t barriers_completed = 0;
  uint64_t workgroups_completed = 0;
  uint64_t runlist_updates = 0;    // started
  uint64_t runlist_completed = 0;  // finished (recorded)
  uint64_t suspends = 0;
  uint64_t resumes = 0;
  uint64_t quantum_rotations = 0;
  uint64_t waves_saved = 0;
  uint64_t waves_restored = 0;
  uint64_t events = 0;
};

struct QueueState {
  bool runnable = false;
  bool mapped = false;
  uint32_t priority = 0;
  std::size_t jobs = 0;              // queued + running
  uint64_t completed = 0;            // jobs finished
  uint64_t waves_running = 0;        // resident on CUs now
  uint64_t waves_saved = 0;          // in the context-save area
  uint64_t workgroups_done = 0;      // of the kernel at the head (progress)
  uint64_t workgroups_total = 0;
};

class GpuEngine {
 public:
  GpuEngine(GpuProfile profile, uint32_t gpu_id, EngineOptions options = {});
  ~GpuEngine();
  GpuEngine(const GpuEngine&) = delete;
  GpuEngine& operator=(const GpuEngine&) = delete;

  // A queue joins the device (KFD CREATE_QUEUE). With remap_on_queue_change it becomes mapped
  // after one whole-runlist refresh; otherwise at once.
  void add_queue(QueueKey key, uint32_t priority, bool suspended);
  // The queue is gone (DESTROY_QUEUE or process exit): its waves and jobs are dropped without
  // completion callbacks.
  void remove_queue(QueueKey key);
  bool has_queue(QueueKey key) const;

  // KFD's CU mask (AMDKFD_IOC_SET_CU_MASK), modelled as the range [first_cu, first_cu + cus) of
  // every XCC: the queue's workgroups launch only there. Queues with the same range share those
  // CUs; a queue without a mask may use every CU. Applies to kernels that start afterwards.
  void set_cu_mask(QueueKey key, uint32_t first_cu, uint32_t cus);
  // Highest number of wave slots occupied at once in that range on any XCC (0 if no queue has
  // it); a register-heavy wave occupies more than one slot (cwsr_model.h).
  uint64_t cu_mask_peak_waves(uint32_t first_cu, uint32_t cus) const;
  // Accounting label of a queue (0: none): group_busy_ns(g) is the time during which at least
  // one wave of a queue of group g was resident on the device.
  void set_queue_group(QueueKey key, uint32_t group);
  SimTime group_busy_ns(uint32_t group) const;

  // Jobs run in order per queue, one at a time. A kernel one workgroup of which cannot fit a
  // compute unit throws std::invalid_argument naming it (cwsr_model.h occupancy()).
  void submit_kernel(QueueKey key, const KernelSpec& spec, JobDone done);
  void submit_barrier(QueueKey key, BarrierReady ready, JobDone done);
  // Something outside the engine may have satisfied a barrier: evaluate waiting ones now.
  void recheck_barriers();

  // Unmap the whole runlist, then map `runnable` (Hws::execute_runlist). Requests queue up and
  // run one after the other, as KFD serialises them under the device lock.
  void execute_runlist(uint32_t grace_kclk, const std::vector<QueueKey>& runnable,
                       std::function<void(int)> done);

  SimTime now() const { return now_; }
  std::optional<SimTime> next_event_time() const;
  // Process every event due at or before t; afterwards now() == max(now(), t).
  void advance_to(SimTime t);
  // Process events until none is left or `limit` is reached; returns the time reached.
  SimTime run_until_idle(SimTime limit);

  uint32_t gpu_id() const { return gpu_id_; }
  const GpuProfile& profile() const { return profile_; }
  const std::deque<RunlistRecord>& records() const { return records_; }
  const EngineCounters& counters() const { return counters_; }
  std::optional<QueueState> queue_state(QueueKey key) const;
  // Wave slots occupied on XCC x (a register-heavy wave occupies more than one).
  uint32_t busy_waves(uint32_t xcc) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  GpuProfile profile_;
  uint32_t gpu_id_;
  SimTime now_ = 0;
  EngineCounters counters_;
  std::deque<RunlistRecord> records_;
};

}  // namespace gpreempt::sim::gpu
