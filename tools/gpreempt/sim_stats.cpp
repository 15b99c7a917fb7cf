#include "sim_stats.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "sim/protocol/gpu_stats_query.h"
#include "sim/protocol/machine_paths.h"

namespace gpreempt::cli {

std::string sim_machine_socket() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
  };
  if (!set(sim::protocol::kEnvDir) && !set(sim::protocol::kEnvSocket)) return "";
  return sim::protocol::machine_paths(std::getenv, static_cast<unsigned>(getuid())).socket;
}

std::optional<nlohmann::json> read_sim_stats(uint64_t since_seq) {
  const std::string socket = sim_machine_socket();
  if (socket.empty()) return std::nullopt;
  auto r = sim::protocol::fetch_gpu_stats(socket, since_seq);
  if (r.error) return std::nullopt;
  return std::move(r.stats);
}

namespace {

double us(const nlohmann::json& ns) { return ns.get<double>() / 1000.0; }

}  // namespace

SimStatsMark sim_stats_mark() {
  SimStatsMark out;
  // Asking for records after the largest possible seq returns none: only the marks.
  if (auto s = read_sim_stats(UINT64_MAX))
    for (const auto& g : s->value("gpus", nlohmann::json::array()))
      out[g.value("gpu_id", 0u)] = g.value("last_seq", uint64_t{0});
  return out;
}

SimPreemptionSamples sim_samples_since(const SimStatsMark& mark) {
  SimPreemptionSamples out;
  uint64_t since = mark.empty() ? 0 : UINT64_MAX;
  for (const auto& [gpu, seq] : mark) since = std::min(since, seq);
  const auto stats = read_sim_stats(since);
  if (!stats) return out;
  out.available = true;
  for (const auto& gpu : stats->value("gpus", nlohmann::json::array())) {
    const auto it = mark.find(gpu.value("gpu_id", 0u));
    const uint64_t base = it == mark.end() ? 0 : it->second;
    for (const auto& r : gpu.value("runlist", nlohmann::json::array())) {
      if (r.value("seq", uint64_t{0}) <= base) continue;
      const std::string kind = r.value("kind", "");
      if (kind == "suspend") {
        if (r.contains("stop_latency_ns") && r["stop_latency_ns"].is_number())
          out.stop_us.push_back(us(r["stop_latency_ns"]));
        if (r.contains("round_trip_ns") && r["round_trip_ns"].is_number())
          out.suspend_round_trip_us.push_back(us(r["round_trip_ns"]));
      } else if (kind == "resume" && r.contains("round_trip_ns") && r["round_trip_ns"].is_number()) {
        out.resume_round_trip_us.push_back(us(r["round_trip_ns"]));
      }
    }
  }
  return out;
}

}  // namespace gpreempt::cli
