// The simulated GPUs behind the simulated KFD: implements the device's Hws hook (runlist
// updates with timing, slots and CWSR, one GpuEngine per gpu_id) and the command processor that
// executes the AQL packets workload processes write into their rings.
//
// The owner drives time: the daemon calls advance_to(wall-clock ns) and poll()/doorbell() when
// a process may have written packets; a discrete-event driver jumps from one next_event_time()
// to the next. See docs/sim-model.md.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/device/kfd_device.h"
#include "sim/gpu/engine.h"
#include "sim/gpu/process_memory.h"
#include "sim/gpu/profile.h"

namespace gpreempt::sim::gpu {

struct GpuModelOptions {
  GpuProfile profile = mi308x_profile();
  EngineOptions engine;
};

// What the CP knows about one queue (kfdsim stats shows it).
struct CpQueueStats {
  int pid = 0;
  uint32_t queue_id = 0;
  uint32_t gpu_id = 0;
  uint64_t fetched = 0;    // packets handed to the engine
  uint64_t completed = 0;  // read_dispatch_id as last written
  std::string error;       // why the CP stopped reading this queue, if it did
};

class SdmaQueue;

class GpuModel final : public Hws {
 public:
  GpuModel(GpuModelOptions options, ProcessMemory& memory);
  ~GpuModel() override;

  // Hws
  void queue_created(const QueueView& q) override;
  void queue_destroyed(int pid, uint32_t queue_id, uint32_t gpu_id) override;
  void execute_runlist(uint32_t gpu_id, uint32_t grace_period,
                       const std::vector<QueueView>& runnable,
                       std::function<void(int)> done) override;
  // The simulated clock in the GPU's 100 MHz counter: the CP stamps completion signals in these
  // ticks, and ROCr translates them with GET_CLOCK_COUNTERS samples, so both read one clock.
  uint64_t gpu_clock_counter() const override;
  // Where the simulated time stands between events (the daemon's wall clock since the model
  // began); without one, the time of the last event.
  void set_clock(std::function<SimTime()> clock) { clock_ = std::move(clock); }

  // A doorbell write for this queue: fetch the packets up to its write dispatch id.
  void doorbell(int pid, uint32_t queue_id);
  // Fetch new packets on every queue (the CP also polls the write pointer, CP_HQD_PQ_WPTR_POLL),
  // and re-evaluate barriers whose signals the host may have changed.
  void poll();

  SimTime now() const { return now_; }
  std::optional<SimTime> next_event_time() const;
  void advance_to(SimTime t);
  // Discrete-event driving: run until nothing is scheduled or `limit` is reached.
  SimTime run_until_idle(SimTime limit);

  GpuEngine& engine(uint32_t gpu_id);  // created with the profile on first use
  std::vector<uint32_t> gpu_ids() const;
  std::vector<CpQueueStats> queue_stats() const;
  bool has_queues() const { return !queues_.empty() || !sdma_.empty(); }
  // ROCr blit kernels (sim/gpu/rocr_blit.h) whose copy or fill was carried out.
  uint64_t blits_completed() const { return blits_; }
  // The processes whose completion signals were written since the last call (to ring their bells).
  std::set<int> take_signalled() { return std::exchange(signalled_, {}); }
  // The processes whose event-page slots (interrupt signals' mailboxes) were written since the
  // last call: the interrupts the KFD takes (kfd_signal_event_interrupt).
  std::set<int> take_interrupted() { return std::exchange(interrupted_, {}); }
  // The compute queues the CP reads, as the KFD created them (their doorbells, for a watcher).
  std::vector<QueueView> queue_views() const;
  // {"now_ns", "profile", "gpus":[{gpu_id, counters, last_seq, more, runlist:[records]}],
  // "queues":[...]}: per GPU the records with seq > since_seq, oldest first, at most max_records
  // in all GPUs together ("more" on a GPU says some were left out: ask again from the last seq
  // returned for it).
  nlohmann::json stats_json(uint64_t since_seq = 0, std::size_t max_records = SIZE_MAX) const;
  const GpuModelOptions& options() const { return options_; }

 private:
  struct CpQueue;
  void fetch(CpQueue& q);
  void complete_packet(int pid, uint32_t queue_id, uint64_t dispatch_id, uint64_t signal,
                       const JobResult& r);
  void fail_queue(CpQueue& q, std::string why);

  GpuModelOptions options_;
  ProcessMemory& memory_;
  SimTime now_ = 0;
  std::map<uint32_t, std::unique_ptr<GpuEngine>> engines_;
  std::map<QueueKey, std::unique_ptr<CpQueue>> queues_;
  std::map<QueueKey, std::unique_ptr<SdmaQueue>> sdma_;  // their engines' rings (sim/gpu/sdma.h)
  // SDMA queues outside the runlist (suspended or otherwise inactive): KFD maps SDMA queues in
  // the same HWS runlist as compute queues, so SUSPEND_QUEUES stops them too.
  std::set<QueueKey> sdma_unmapped_;
  std::set<int> signalled_;
  std::set<int> interrupted_;
  uint64_t blits_ = 0;  // ROCr blit kernels whose copy or fill the CP carried out
  std::function<SimTime()> clock_;
};

}  // namespace gpreempt::sim::gpu
