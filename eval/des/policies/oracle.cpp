// "oracle": the bound no real mechanism reaches — the offline queues leave the GPU the instant
// online work is pending and come back the instant it is not, at no cost (no runlist update, no
// context save). The online queues sit at the top priority, as under "priority".
#include "eval/des/policy.h"

namespace gpreempt::eval::des {
namespace {

class Oracle final : public Policy {
 public:
  Oracle(const Spec& spec, PolicyHost& host)
      : host_(host), record_(spec.record.decisions), held_(spec.gpus, false), since_(spec.gpus, 0) {}

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
    host_.engine(gpu).set_runnable_instant(runnable);
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
