#include "eval/des/result.h"

#include <cmath>

#include "common/json_conventions.h"
#include "common/latency_summary.h"
#include "eval/des/llm/metrics.h"

namespace gpreempt::eval::des {

namespace jc = gpreempt::json_conventions;
using nlohmann::ordered_json;

namespace {

ordered_json ms_or_null(double v) {
  if (std::isnan(v)) return nullptr;
  return jc::round_ms(v);
}

ordered_json us(sim::gpu::SimTime ns) { return jc::round_us(static_cast<double>(ns) / 1e3); }

double mean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

ordered_json result_document(const Spec& spec, const RunResult& r, const RunInfo& info) {
  std::vector<double> all;
  for (const auto& c : r.clients)
    if (c.online) all.insert(all.end(), c.latencies_ms.begin(), c.latencies_ms.end());
  uint64_t requests = 0;
  for (const auto& c : r.clients) requests += c.online ? c.requests : 0;

  ordered_json row;
  row["baseline"] = spec.baseline;
  row["online_requests"] = requests;
  row["online_p50_ms"] = ms_or_null(percentile(all, 50));
  row["online_p95_ms"] = ms_or_null(percentile(all, 95));
  row["online_p99_ms"] = ms_or_null(percentile(all, 99));
  row["online_mean_ms"] = ms_or_null(mean(all));
  row["online_solo_p50_ms"] = info.solo_p50_ms ? ordered_json(jc::round_ms(*info.solo_p50_ms)) : ordered_json(nullptr);
  row["offline_iterations"] = r.offline_iterations;
  row["offline_iterations_per_s"] =
      r.sim_seconds > 0 ? jc::round_to(static_cast<double>(r.offline_iterations) / r.sim_seconds, 3) : 0.0;
  row["offline_gpu_busy_fraction"] = jc::round_to(r.offline_gpu_busy_fraction, 4);
  row["online_gpu_busy_fraction"] = jc::round_to(r.online_gpu_busy_fraction, 4);
  // The LLM servers' metrics (llm::metrics); the row carries the first server's headline numbers.
  ordered_json llm = ordered_json::array();
  for (const auto& l : r.llm) llm.push_back(llm::metrics(l, r.sim_seconds, spec.record.latencies));
  const bool has_llm = !llm.empty();
  row["ttft_p99_ms"] = has_llm ? llm[0]["ttft_ms"]["p99"] : ordered_json(nullptr);
  row["tpot_p99_ms"] = has_llm ? llm[0]["tpot_ms"]["p99"] : ordered_json(nullptr);
  row["slo_attainment"] = has_llm ? llm[0]["slo_attainment"] : ordered_json(nullptr);
  row["p99_meets_slo"] = has_llm ? llm[0]["p99_meets_slo"] : ordered_json(nullptr);
  row["output_tokens_per_s"] = has_llm ? llm[0]["output_tokens_per_s"] : ordered_json(nullptr);
  row["suspensions"] = r.suspensions;
  row["flaps"] = r.flaps;
  row["suspended_s"] = jc::round_to(r.suspended_s, 6);
  row["actuation_timeouts"] = r.actuation_timeouts;
  row["waves_saved"] = r.waves_saved;
  row["sim_seconds"] = jc::round_to(r.sim_seconds, 6);
  row["wall_seconds"] = info.wall_seconds ? ordered_json(jc::round_to(*info.wall_seconds, 3)) : ordered_json(nullptr);
  row["events"] = r.events;

  ordered_json clients = ordered_json::array();
  for (const auto& c : r.clients) {
    ordered_json j;
    j["name"] = c.name;
    j["kind"] = c.online ? "online" : "offline";
    if (c.online) {
      j["requests"] = c.requests;
      j["p50_ms"] = ms_or_null(percentile(c.latencies_ms, 50));
      j["p99_ms"] = ms_or_null(percentile(c.latencies_ms, 99));
      j["iterations"] = nullptr;
    } else {
      j["requests"] = nullptr;
      j["p50_ms"] = nullptr;
      j["p99_ms"] = nullptr;
      j["iterations"] = c.iterations;
    }
    clients.push_back(std::move(j));
  }

  ordered_json lat = ordered_json::array();
  for (double v : r.latencies_ms) lat.push_back(jc::round_ms(v));
  ordered_json timeline = ordered_json::array();
  for (const auto& t : r.timeline)
    timeline.push_back({{"gpu", t.gpu}, {"kind", t.kind}, {"who", t.who}, {"start_us", us(t.start)}, {"end_us", us(t.end)}});
  ordered_json decisions = ordered_json::array();
  for (const auto& d : r.decisions)
    decisions.push_back({{"t_us", us(d.t)}, {"gpu", d.gpu}, {"action", d.action}, {"targets", d.targets}, {"reason", d.reason}});

  ordered_json body;
  body["spec"] = spec.source;
  body["row"] = std::move(row);
  body["clients"] = std::move(clients);
  body["llm"] = std::move(llm);
  body["latencies_ms"] = std::move(lat);
  body["timeline"] = std::move(timeline);
  body["decisions"] = std::move(decisions);
  return jc::document(body);
}

}  // namespace gpreempt::eval::des
