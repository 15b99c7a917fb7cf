// "oracle": the bound no real mechanism reaches — the offline queues leave the GPU the instant
// online work is pending and come back the instant it is not, and the switch costs nothing. The
// switch is the GPU model's own runlist update, on hardware (Policy::hardware) where every cost of
// a preemption is zero: no HWS unmap or map latency, no grace period, no CWSR save or restore, no
// wave-state copy. So the waves it stops keep their progress and the ones it lets in start at once,
// and the GPU model has no path of its own for the oracle. The online queues sit at the top
// priority, as under "priority".
#include <limits>

#include "eval/des/policy.h"
#include "gpreempt/kfd_abi.h"

namespace gpreempt::eval::des {
namespace {

class Oracle final : public Policy {
 public:
  Oracle(const Spec& spec, PolicyHost& host)
      : host_(host), record_(spec.record.decisions), held_(spec.gpus, false), since_(spec.gpus, 0) {}

  sim::gpu::GpuProfile hardware(const sim::gpu::GpuProfile& model) const override {
    sim::gpu::GpuProfile free = model;
    free.unmap_latency_ns = free.map_latency_ns = 0;
    free.grace_packet_ns = free.suspend_copy_ns = 0;
    free.default_grace_kclk = 0;  // waves stop at once: the switch is asked with the default grace
    free.save_fixed_ns = free.restore_fixed_ns = 0;
    free.save_bandwidth_gbps = free.restore_bandwidth_gbps = std::numeric_limits<double>::infinity();
    return free;
  }
  uint32_t queue_priority(bool online) const override {
    return online ? kHighQueuePriority : kLowQueuePriority;
  }
  void online_pending(uint32_t gpu, bool pending) override {
    if (pending == held_[gpu]) return;
    held_[gpu] = pending;
    std::vector<sim::gpu::QueueKey> runnable = host_.queues_on(gpu, true);
    if (!pending) {
      const auto offline = host_.queues_on(gpu, false);
      runnable.insert(runnable.end(), offline.begin(), offline.end());
    }
    host_.engine(gpu).execute_runlist(kfd::KFD_USE_DEFAULT_GRACE_PERIOD, runnable, {});
    const std::vector<std::string> offline = host_.offline_on(gpu);
    if (offline.empty()) return;
    const sim::gpu::SimTime now = host_.now();
    if (pending) {
      ++switches_;
      since_[gpu] = now;
    } else {
      windows_.push_back({gpu, {}, since_[gpu], now});
    }
    if (record_) host_.record({now, gpu, pending ? "suspend" : "resume", offline, "oracle"});
  }
  void finish(sim::gpu::SimTime now, RunResult& res, std::vector<SuspendedWindow>& windows) override {
    for (uint32_t g = 0; g < held_.size(); ++g)
      if (held_[g] && !host_.offline_on(g).empty()) windows_.push_back({g, {}, since_[g], now});
    res.suspensions = switches_;
    windows = windows_;
  }

 private:
  PolicyHost& host_;
  bool record_;
  std::vector<bool> held_;  // per GPU: offline queues switched out
  std::vector<sim::gpu::SimTime> since_;
  uint64_t switches_ = 0;
  std::vector<SuspendedWindow> windows_;
};

}  // namespace

std::unique_ptr<Policy> make_oracle(const Spec& spec, PolicyHost& host) {
  return std::make_unique<Oracle>(spec, host);
}

}  // namespace gpreempt::eval::des
