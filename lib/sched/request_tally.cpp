#include "sched/request_tally.h"

namespace gpreempt::sched {

void RequestTally::done(const RequestDone& d) {
  for (GpuId g : d.gpus) {
    GpuRequests& r = gpus_[g];
    r.latency.add(d.latency);
    ++r.by_class[d.class_name];
    ++r.by_process[d.key];
  }
}

void RequestTally::exited(const ProcessKey& key) {
  for (auto& [gpu, r] : gpus_) r.by_process.erase(key);
}

}  // namespace gpreempt::sched
