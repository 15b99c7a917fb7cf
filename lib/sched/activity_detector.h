// Turns samples of a process's queue read/write pointers into request events: the transparent
// trigger's logic, with no I/O and no clock (the caller passes the time of each sample).
//
// A process is *busy* from the first sample that shows GPU work — some queue with wptr > rptr, or
// a write pointer that advanced since the previous sample (work submitted, and maybe already
// done, since the last look) — until every queue shows rptr == wptr with no write pointer advance
// for at least `settle`. Each busy period is one request: RequestStarted{source=kTransparent} when
// it begins, RequestFinished when it ends, with an id unique in this detector.
//
// Kernel lengths (KernelObserved) are inferred, not measured. The command processor advances the
// read pointer when it retires a packet, and an in-order queue starts its head packet when the
// previous one retires (or when it is submitted to an idle queue). So a packet's start and end are
// each known to lie between two samples; the detector dates both at the middle of that interval
// and reports end - start, which is off by at most one poll interval either way. When several
// packets retire in one interval, back to back (all were already submitted at the previous
// sample), each gets the mean of their total. Nothing is reported when the head packet's start was
// not seen (first sample of a queue) or when a gap may have hidden idle time. Barrier packets
// count as packets; a queue suspended by gpreempt looks like a longer kernel.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sched/event.h"
#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreempt::sched {

// One queue of the process at one sample. `queue` names the queue within its process and must stay
// the same while the queue lives (the trigger uses the read pointer's address). Dispatch ids are
// 64-bit and only grow: a pointer that goes backwards means the queue was replaced (same address
// reused) and it is followed afresh.
struct QueueActivitySample {
  GpuId gpu = 0;
  uint64_t queue = 0;
  uint64_t rptr = 0;
  uint64_t wptr = 0;
};

// How often the transparent trigger samples the watched queues' pointers by default: gpreemptd's
// [daemon] poll_interval_us and the DES's policy.poll_interval_us start from it.
inline constexpr Duration kDefaultPollInterval = std::chrono::microseconds(200);

struct ActivityDetectorConfig {
  // How long a busy process must look idle before its request ends. 0 ends it at the first idle
  // sample; a runtime that submits a request's kernels one by one with host work in between
  // needs about that host gap, or one request shows up as several.
  Duration settle{0};
  // Report inferred kernel lengths (KernelObserved).
  bool kernel_lengths = true;
};

class ActivityDetector {
 public:
  // At most this many KernelObserved per queue and sample (the grace estimator keeps 64).
  static constexpr uint64_t kMaxKernelEventsPerQueue = 64;

  explicit ActivityDetector(ActivityDetectorConfig config = {});

  // The pointers of every queue `key` has now (a queue missing from `samples` is gone). Returns
  // the events this sample causes, in order: RequestStarted, KernelObserved..., RequestFinished.
  std::vector<Event> update(Time now, const ProcessKey& key,
                            const std::vector<QueueActivitySample>& samples);
  // Stop following `key` (unwatched, or exited): ends its open request, if any.
  std::vector<Event> forget(Time now, const ProcessKey& key);

  bool busy(const ProcessKey& key) const;
  std::optional<uint64_t> open_request(const ProcessKey& key) const;
  const ActivityDetectorConfig& config() const { return config_; }

  struct Stats {
    uint64_t requests = 0;          // RequestStarted emitted
    uint64_t kernels_observed = 0;  // KernelObserved emitted
    uint64_t queue_resets = 0;      // pointers went backwards: queue replaced at the same address
  };
  const Stats& stats() const { return stats_; }

 private:
  struct QueueState {
    GpuId gpu = 0;
    uint64_t rptr = 0;
    uint64_t wptr = 0;
    std::optional<Time> head_since;  // estimated start of the packet at index rptr
    uint64_t epoch = 0;              // the last update that listed this queue
  };
  struct Process {
    std::map<uint64_t, QueueState> queues;
    std::optional<Time> last_sample;
    std::optional<uint64_t> open;
    std::optional<Time> idle_since;
    uint64_t epoch = 0;  // counts updates
  };

  ActivityDetectorConfig config_;
  std::map<ProcessKey, Process> processes_;
  uint64_t next_request_ = 1;
  Stats stats_;
};

}  // namespace gpreempt::sched
