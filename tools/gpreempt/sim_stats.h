// The simulated GPU's own record of every runlist update (sim/gpu/runlist_record.h), which tools
// ask the machine's daemon for (what `kfdsim stats` shows) to report the *simulated* preemption
// latency next to the wall-clock cost of the ioctl path. On real hardware there is no daemon and
// every function here says so by returning nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::cli {

// The daemon's socket when this process runs on a simulated machine (kfdsim run / the shim set
// KFDSIM_DIR or KFDSIM_SOCKET), else "".
std::string sim_machine_socket();
// Counters, queues and the runlist records with seq > since_seq; nullopt off the simulator or when
// its hardware records nothing (--hardware instant).
std::optional<nlohmann::json> read_sim_stats(uint64_t since_seq = 0);

// Highest runlist record sequence number per GPU: a mark to count only later records.
using SimStatsMark = std::map<uint32_t, uint64_t>;
SimStatsMark sim_stats_mark();

// Per-record model times (microseconds) of the suspends and resumes after `mark`. The daemon
// records an update before it answers the ioctl that caused it, so once our calls have returned
// their records are all there.
struct SimPreemptionSamples {
  bool available = false;                  // the simulator answered
  std::vector<double> stop_us;             // suspend requested -> queues actually stopped
  std::vector<double> suspend_round_trip_us;  // suspend: unmap + CWSR save + remap
  std::vector<double> resume_round_trip_us;   // resume: remap + CWSR restore
};
SimPreemptionSamples sim_samples_since(const SimStatsMark& mark);

}  // namespace gpreempt::cli
