// The GPU model's records of a running simulated machine (Op::kGpuStats), fetched page by page
// and merged into one document, so a caller never meets the per-message limit.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace gpreempt::sim::protocol {

struct GpuStatsResult {
  int error = 0;  // transport -errno (no daemon), or -ENODEV: this machine's hardware records nothing
  nlohmann::json stats;  // as GpuModel::stats_json, every runlist record with seq > since_seq
};

GpuStatsResult fetch_gpu_stats(const std::string& socket_path, uint64_t since_seq = 0);

}  // namespace gpreempt::sim::protocol
