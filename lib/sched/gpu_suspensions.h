// Whose queues are suspended on which GPU, as the actuator's answers say (not as the scheduler
// intends), how long they have been, and which (GPU, process) pairs have an action on its way.
// The Runtime (runtime.h) keeps it; the status, the metrics and the evaluation read it.
//
// Answers arrive asynchronously, after events that may have changed their target meanwhile:
// * a suspend completing after its process exited books nothing: its queues went with it, and
//   the scheduler has forgotten it too;
// * a suspend completing for a live process the GPU's arbiter no longer has (it closed its queues
//   there, or lost its class) is tracked, since its queues are suspended and need a resume of
//   their own (an orphan), but not counted, as the scheduler does not count it either;
// * an orphan is due for its resume only when nothing is in flight for it: a resume already on
//   its way ends the suspension (resuming it again was two RESUMEs for one suspension).
// So the suspensions summed over GPUs equal the scheduler's summed over classes, and every
// suspension booked ends exactly once (a resume, or the process's exit).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sched/event.h"
#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreempt::sched {

// One GPU's suspensions.
struct GpuSuspensionTally {
  uint64_t suspensions = 0;            // targets a suspend completed for (managed ones)
  Duration suspended_total{0};         // ended suspensions
  std::map<ProcessKey, Time> suspended_since;  // ongoing ones
  struct Share {
    uint64_t suspensions = 0;
    Duration suspended{0};
  };
  std::map<std::string, Share> by_class;   // surviving its processes; "" for none
  std::map<ProcessKey, Share> by_process;  // live processes only

  Duration suspended_total_at(Time now) const {
    Duration d = suspended_total;
    for (const auto& [key, since] : suspended_since) d += now - since;
    return d;
  }
};

class GpuSuspensions {
 public:
  struct Facts {
    // Whether the process has not exited.
    std::function<bool(const ProcessKey&)> live;
    // Whether the GPU's arbiter has the process: the scheduler counts suspensions of those only.
    std::function<bool(GpuId, const ProcessKey&)> managed;
    // Its class now ("" for none), for the per-class tallies.
    std::function<std::string(const ProcessKey&)> class_of;
  };

  explicit GpuSuspensions(Facts facts) : facts_(std::move(facts)) {}

  // A suspend or resume of `targets` on `gpu` was handed to the actuator.
  void posted(GpuId gpu, const std::vector<ProcessKey>& targets);
  // Its answer.
  void completed(const event::ActuationCompleted& c, bool suspend, Time now);
  // The process exited: its suspensions end here, and it leaves the per-process tallies.
  void exited(const ProcessKey& key, Time now);
  bool in_flight(GpuId gpu, const ProcessKey& key) const {
    return in_flight_.count({gpu, key}) != 0;
  }
  // Suspended on `gpu`, no longer managed there, and nothing in flight for it: what must be
  // resumed without the arbiter (Scheduler::recover).
  std::vector<ProcessKey> orphans(GpuId gpu) const;
  // Nothing suspended on any GPU.
  bool none_suspended() const;

  // The class an ongoing suspension of `key` on `gpu` is booked under (the one it began under).
  std::string class_at_start(GpuId gpu, const ProcessKey& key) const;

  // nullptr for a GPU no suspension was ever posted for.
  const GpuSuspensionTally* gpu(GpuId id) const;
  const std::map<GpuId, GpuSuspensionTally>& gpus() const { return gpus_; }

 private:
  void ended(GpuId gpu, GpuSuspensionTally& t, const ProcessKey& key, Duration d);

  Facts facts_;
  std::map<GpuId, GpuSuspensionTally> gpus_;
  // The class each ongoing suspension began under: its end is booked there too, whatever a
  // reload or the process's exit has made of the class since.
  std::map<std::pair<GpuId, ProcessKey>, std::string> class_at_start_;
  std::map<std::pair<GpuId, ProcessKey>, int> in_flight_;
};

}  // namespace gpreempt::sched
