#include "sim_stats.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace gpreempt::cli {

std::string sim_stats_path() {
  if (const char* p = std::getenv("GPREEMPT_SIM_STATS"); p && *p) return p;
  if (const char* d = std::getenv("KFDSIM_DIR"); d && *d) return std::string(d) + "/gpu-stats.json";
  return "";
}

std::optional<nlohmann::json> read_sim_stats() {
  const std::string path = sim_stats_path();
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  // The daemon replaces the file by rename, so a read never sees half a document; a parse error
  // therefore means a foreign file, which we do not pretend to understand.
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

namespace {

SimStatsMark last_seq(const nlohmann::json& stats) {
  SimStatsMark out;
  for (const auto& g : stats.value("gpus", nlohmann::json::array())) {
    uint64_t m = 0;
    for (const auto& r : g.value("runlist", nlohmann::json::array()))
      m = std::max<uint64_t>(m, r.value("seq", uint64_t{0}));
    out[g.value("gpu_id", 0u)] = m;
  }
  return out;
}

template <typename F>
void for_each_new_record(const nlohmann::json& stats, const SimStatsMark& mark, F&& f) {
  for (const auto& gpu : stats.value("gpus", nlohmann::json::array())) {
    const auto it = mark.find(gpu.value("gpu_id", 0u));
    const uint64_t base = it == mark.end() ? 0 : it->second;
    for (const auto& r : gpu.value("runlist", nlohmann::json::array()))
      if (r.value("seq", uint64_t{0}) > base) f(r);
  }
}

double us(const nlohmann::json& ns) { return ns.get<double>() / 1000.0; }

}  // namespace

SimStatsMark sim_stats_mark() {
  auto s = read_sim_stats();
  return s ? last_seq(*s) : SimStatsMark{};
}

SimPreemptionSamples sim_samples_since(const SimStatsMark& mark, std::size_t expected) {
  SimPreemptionSamples out;
  std::optional<nlohmann::json> stats;
  for (int i = 0; i < 20; ++i) {
    stats = read_sim_stats();
    std::size_t n = 0;
    if (stats)
      for_each_new_record(*stats, mark, [&](const nlohmann::json& r) {
        const std::string kind = r.value("kind", "");
        n += kind == "suspend" || kind == "resume";
      });
    if (!stats || n >= expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!stats) return out;
  out.available = true;
  for_each_new_record(*stats, mark, [&](const nlohmann::json& r) {
    const std::string kind = r.value("kind", "");
    if (kind == "suspend") {
      if (r.contains("stop_latency_ns") && r["stop_latency_ns"].is_number())
        out.stop_us.push_back(us(r["stop_latency_ns"]));
      if (r.contains("round_trip_ns") && r["round_trip_ns"].is_number())
        out.suspend_round_trip_us.push_back(us(r["round_trip_ns"]));
    } else if (kind == "resume" && r.contains("round_trip_ns") && r["round_trip_ns"].is_number()) {
      out.resume_round_trip_us.push_back(us(r["round_trip_ns"]));
    }
  });
  return out;
}

}  // namespace gpreempt::cli
