// The status document: the reply to the socket's "status" op and what `gpreempt ctl status --json`
// prints (schemas/gpreemptd-status.schema.json; keys follow lib/common/json_conventions). Other
// tools (`gpreempt ctl status`, `gpreempt top`) read exactly these keys: add keys, never rename.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "daemon_config.h"
#include "gpu_record.h"
#include "sched/latency_histogram.h"
#include "sched/process_registry.h"
#include "sched/runtime_snapshot.h"
#include "sched/scheduler.h"
#include "socket_server.h"

namespace gpreemptd {

struct StatusSource {
  int pid = 0;
  std::string config_path;  // empty: built-in classes
  std::string socket_path;
  double uptime_s = 0;
  std::string kfd_version;  // empty: unknown
  bool shutting_down = false;
  gpreempt::sched::Time now{0};
  const DaemonConfig* config = nullptr;
  // Live state: who holds which GPU now, the grace in force, the objectives.
  const gpreempt::sched::Scheduler* scheduler = nullptr;
  // Every figure of what the scheduler did (counts, times, requests): Runtime::snapshot(now).
  const gpreempt::sched::RuntimeSnapshot* figures = nullptr;
  const gpreempt::sched::ProcessRegistry* processes = nullptr;
  const std::map<gpreempt::sched::GpuId, GpuRecord>* gpus = nullptr;
  const gpreempt::sched::LatencyHistogram* hint_to_suspend = nullptr;
  const std::map<std::string, uint64_t>* notices = nullptr;  // core notices by kind
  uint64_t reloads = 0;
  uint64_t failed_reloads = 0;
  uint64_t requests_expired = 0;
  uint64_t hints_rate_limited = 0;
  const SocketCounters* socket = nullptr;  // null: no socket (yet)
  // Set: the document for a peer of this uid that may not see everything — only that uid's
  // processes, and no class's match rules (they tell how to be classified).
  std::optional<uint32_t> only_uid;
};

nlohmann::ordered_json status_document(const StatusSource& s);

// {"count", "p50", "p99", "max"} of `h` in milliseconds (or microseconds with `micro`).
nlohmann::ordered_json latency_summary_json(const gpreempt::sched::LatencyHistogram& h,
                                            bool micro = false);

}  // namespace gpreemptd
