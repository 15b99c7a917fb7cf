// The simulated GPU's own record of every runlist update (sim/gpu/runlist_record.h), which kfdsimd
// writes to $GPREEMPT_SIM_STATS or $KFDSIM_DIR/gpu-stats.json. Tools read it to report the
// *simulated* preemption latency next to the wall-clock cost of the ioctl path. On real hardware
// there is no such file and every function here says so by returning nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::cli {

std::string sim_stats_path();  // "" when not running on the simulator
std::optional<nlohmann::json> read_sim_stats();

// Highest runlist record sequence number per GPU: a mark to count only later records.
using SimStatsMark = std::map<uint32_t, uint64_t>;
SimStatsMark sim_stats_mark();

// Per-record model times (microseconds) of the suspends and resumes after `mark`.
struct SimPreemptionSamples {
  bool available = false;                  // a stats file was read
  std::vector<double> stop_us;             // suspend requested -> queues actually stopped
  std::vector<double> suspend_round_trip_us;  // suspend: unmap + CWSR save + remap
  std::vector<double> resume_round_trip_us;   // resume: remap + CWSR restore
};
// The daemon rewrites the file right after each update; this waits (up to ~1 s) until at least
// `expected` suspend+resume records newer than `mark` are there, then collects what it has.
SimPreemptionSamples sim_samples_since(const SimStatsMark& mark, std::size_t expected);

}  // namespace gpreempt::cli
