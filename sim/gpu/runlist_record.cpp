#include "sim/gpu/runlist_record.h"

namespace gpreempt::sim::gpu {

std::string to_string(RunlistKind k) {
  switch (k) {
    case RunlistKind::kSuspend: return "suspend";
    case RunlistKind::kResume: return "resume";
    case RunlistKind::kCreate: return "create";
    case RunlistKind::kDestroy: return "destroy";
    case RunlistKind::kUpdate: return "update";
  }
  return "?";
}

nlohmann::json to_json(const RunlistRecord& r) {
  auto opt = [](SimTime t) { return t < 0 ? nlohmann::json(nullptr) : nlohmann::json(t); };
  nlohmann::json j;
  j["seq"] = r.seq;
  j["gpu_id"] = r.gpu_id;
  j["kind"] = to_string(r.kind);
  j["grace_kclk"] = r.grace_kclk;
  j["requested_ns"] = r.requested_ns;
  j["unmap_started_ns"] = opt(r.unmap_started_ns);
  j["stopped_ns"] = opt(r.stopped_ns);
  j["save_ns"] = r.save_ns;
  j["waves_saved"] = r.waves_saved;
  j["bytes_saved"] = r.bytes_saved;
  j["restore_ns"] = r.restore_ns;
  j["waves_restored"] = r.waves_restored;
  j["bytes_restored"] = r.bytes_restored;
  j["resumed_ns"] = opt(r.resumed_ns);
  // What a preemption costs in simulated time: until the queues stopped, and the round trip.
  j["stop_latency_ns"] = r.stopped_ns < 0 ? nlohmann::json(nullptr)
                                          : nlohmann::json(r.stopped_ns - r.requested_ns);
  j["round_trip_ns"] = r.resumed_ns < 0 ? nlohmann::json(nullptr)
                                        : nlohmann::json(r.resumed_ns - r.requested_ns);
  j["result"] = r.result;
  j["fault"] = r.fault;
  j["queues_runnable"] = r.queues_runnable;
  j["queues_mapped"] = r.queues_mapped;
  j["queues_suspended"] = r.queues_suspended;
  return j;
}

nlohmann::json to_json(const std::deque<RunlistRecord>& records) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : records) a.push_back(to_json(r));
  return a;
}

}  // namespace gpreempt::sim::gpu
