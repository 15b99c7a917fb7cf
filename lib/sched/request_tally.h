// The requests the Runtime saw finish, per GPU they used: how many, how long each took (start to
// finish, at the times the driver gave), per class and per live process. The one book of request
// latency that gpreemptd's status and metrics and the evaluation render (runtime_snapshot.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/event.h"
#include "sched/latency_histogram.h"
#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreempt::sched {

// A request the Scheduler saw through, from any source (hint or transparent): what it measured.
struct RequestDone {
  ProcessKey key;
  uint64_t request = 0;
  RequestSource source = RequestSource::kHint;
  std::string class_name;
  std::vector<GpuId> gpus;  // the process's, when it finished
  Duration latency{0};      // its start to its finish, at the times the driver gave
};

// One GPU's requests.
struct GpuRequests {
  LatencyHistogram latency;
  std::map<std::string, uint64_t> by_class;   // surviving its processes; "" for none
  std::map<ProcessKey, uint64_t> by_process;  // live processes only
};

class RequestTally {
 public:
  void done(const RequestDone& d);
  // The process left: it leaves the per-process counts (its class keeps them).
  void exited(const ProcessKey& key);
  const std::map<GpuId, GpuRequests>& gpus() const { return gpus_; }

 private:
  std::map<GpuId, GpuRequests> gpus_;
};

}  // namespace gpreempt::sched
