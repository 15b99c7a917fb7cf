// One whole-device runlist update as the simulated HWS lived it: what was asked, when the queues
// actually stopped, what the CWSR save cost and when they ran again. Tools read these (JSON).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/gpu/profile.h"

namespace gpreempt::sim::gpu {

enum class RunlistKind { kSuspend, kResume, kCreate, kDestroy, kUpdate };
std::string to_string(RunlistKind k);

struct RunlistRecord {
  uint64_t seq = 0;
  uint32_t gpu_id = 0;
  RunlistKind kind = RunlistKind::kUpdate;
  uint32_t grace_kclk = 0;       // as requested (0xffffffff = default)
  SimTime requested_ns = 0;      // execute_runlist called
  SimTime unmap_started_ns = -1; // the CP began preempting (after the HIQ round trip)
  SimTime stopped_ns = -1;       // every wave drained or saved: queues actually stopped
  SimTime save_ns = 0;           // CWSR save cost
  uint64_t waves_saved = 0;
  uint64_t bytes_saved = 0;      // their wave state (cwsr_model.h)
  SimTime restore_ns = 0;        // CWSR restore cost of the remapped queues
  uint64_t waves_restored = 0;
  uint64_t bytes_restored = 0;
  SimTime resumed_ns = -1;       // remapped: queues run again (done() follows, after a SUSPEND's copy)
  int result = 0;                // 0, -ETIME, -EIO
  std::string fault;             // injected fault, if any
  uint32_t queues_runnable = 0;  // in the new runlist
  uint32_t queues_mapped = 0;    // got a hardware slot
  uint32_t queues_suspended = 0; // on the device, left out
};

nlohmann::json to_json(const RunlistRecord& r);
nlohmann::json to_json(const std::deque<RunlistRecord>& records);

}  // namespace gpreempt::sim::gpu
