// The daemon's own record of whose queues are suspended on which GPU (GpuRecord's suspensions,
// suspended_since and suspended time), kept in step with the scheduler's accounting, and of which
// (GPU, process) pairs have a suspend or resume on its way through the actuator.
//
// Completions arrive asynchronously, after events that may have changed their target meanwhile:
// * a suspend completing after its process exited books nothing: its queues went with it, and
//   the scheduler has forgotten it too (re-creating its entry counted a suspension no class has
//   and earned a dead process a resume);
// * a suspend completing for a live process the GPU's arbiter no longer has (it closed its queues
//   there, or lost its class) is tracked, since its queues are suspended and need the daemon's own
//   resume, but not counted, as the scheduler does not count it either;
// * such an orphan is resumed only when nothing is in flight for it: a resume already on its way
//   ends the suspension (resuming it again was two RESUMEs for one suspension).
// So the suspensions summed over GPUs equal the scheduler's summed over classes, and every
// suspension booked ends exactly once (a resume, or the process's exit).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpu_record.h"
#include "sched/event.h"
#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreemptd {

class GpuSuspensions {
 public:
  struct Facts {
    // Whether the process has not exited (the tracker still knows it).
    std::function<bool(const gpreempt::sched::ProcessKey&)> live;
    // Whether the GPU's arbiter has the process: the scheduler counts suspensions of those only.
    std::function<bool(gpreempt::sched::GpuId, const gpreempt::sched::ProcessKey&)> managed;
    // Its class now ("" for none), for the per-class tallies.
    std::function<std::string(const gpreempt::sched::ProcessKey&)> class_of;
  };

  explicit GpuSuspensions(Facts facts) : facts_(std::move(facts)) {}

  // A suspend or resume of `targets` on `gpu` was handed to the actuator.
  void posted(gpreempt::sched::GpuId gpu, const std::vector<gpreempt::sched::ProcessKey>& targets);
  // Its completion (rec is that GPU's record).
  void completed(GpuRecord& rec, const gpreempt::sched::event::ActuationCompleted& c, bool suspend,
                 gpreempt::sched::Time now);
  // The process exited: its suspensions end here, and it leaves the per-process tallies.
  void exited(std::map<gpreempt::sched::GpuId, GpuRecord>& gpus,
              const gpreempt::sched::ProcessKey& key, gpreempt::sched::Time now) const;
  bool in_flight(gpreempt::sched::GpuId gpu, const gpreempt::sched::ProcessKey& key) const {
    return in_flight_.count({gpu, key}) != 0;
  }
  // Suspended on `gpu`, no longer managed there, and nothing in flight for it: what the daemon
  // must resume itself.
  std::vector<gpreempt::sched::ProcessKey> orphans(const GpuRecord& rec,
                                                   gpreempt::sched::GpuId gpu) const;

 private:
  void ended(GpuRecord& rec, const gpreempt::sched::ProcessKey& key,
             gpreempt::sched::Duration d) const;

  Facts facts_;
  std::map<std::pair<gpreempt::sched::GpuId, gpreempt::sched::ProcessKey>, int> in_flight_;
};

}  // namespace gpreemptd
