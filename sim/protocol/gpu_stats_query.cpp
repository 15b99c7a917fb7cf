#include "sim/protocol/gpu_stats_query.h"

#include <cerrno>
#include <map>

#include "sim/protocol/query.h"

namespace gpreempt::sim::protocol {

GpuStatsResult fetch_gpu_stats(const std::string& socket_path, uint64_t since_seq) {
  GpuStatsResult out;
  // Every GPU has its own seq; one request serves them all from the smallest position still
  // wanted, and the records a GPU already had are dropped here.
  std::map<uint32_t, uint64_t> position;
  uint64_t since = since_seq;
  for (;;) {
    QueryResult r = query(socket_path, Op::kGpuStats, since);
    if (r.error || r.ret) {
      out.error = r.error ? r.error : static_cast<int>(r.ret);
      out.stats = nullptr;
      return out;
    }
    nlohmann::json page = nlohmann::json::parse(r.payload, nullptr, false);
    if (page.is_discarded() || !page.contains("gpus")) {
      out.error = -EPROTO;
      out.stats = nullptr;
      return out;
    }
    bool more = false;
    if (out.stats.is_null()) {
      out.stats = page;
      for (auto& g : out.stats["gpus"]) {
        uint64_t last = since_seq;
        for (const auto& rec : g["runlist"]) last = rec["seq"].get<uint64_t>();
        position[g["gpu_id"].get<uint32_t>()] = last;
        more |= g.value("more", false);
      }
    } else {
      // Later pages only extend the runlists; counters and queues stay those of the first page,
      // which described the machine at one instant.
      // Only GPUs still marked "more" are extended: a complete one may have new records by now,
      // but taking some of them would leave a gap before `since` and mix two instants.
      for (const auto& g : page["gpus"]) {
        const uint32_t id = g["gpu_id"].get<uint32_t>();
        for (auto& mine : out.stats["gpus"]) {
          if (mine["gpu_id"].get<uint32_t>() != id || !mine.value("more", false)) continue;
          uint64_t& pos = position[id];
          for (const auto& rec : g["runlist"]) {
            const uint64_t seq = rec["seq"].get<uint64_t>();
            if (seq <= pos) continue;
            mine["runlist"].push_back(rec);
            pos = seq;
          }
          mine["more"] = g.value("more", false);
          more |= g.value("more", false);
        }
      }
    }
    if (!more) break;
    since = UINT64_MAX;
    for (auto& g : out.stats["gpus"])
      if (g.value("more", false)) since = std::min(since, position[g["gpu_id"].get<uint32_t>()]);
  }
  for (auto& g : out.stats["gpus"]) g.erase("more");
  return out;
}

}  // namespace gpreempt::sim::protocol
