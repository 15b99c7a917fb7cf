#include "eval/des/llm/metrics.h"

#include <cmath>

#include "common/json_conventions.h"
#include "common/latency_summary.h"

namespace gpreempt::eval::des::llm {

namespace jc = gpreempt::json_conventions;
using nlohmann::ordered_json;

namespace {

ordered_json ms(double v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(jc::round_ms(v)); }

ordered_json summary(const std::vector<double>& v) {
  double mean = std::nan("");
  if (!v.empty()) {
    mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
  }
  return {{"p50", ms(percentile(v, 50))}, {"p90", ms(percentile(v, 90))}, {"p99", ms(percentile(v, 99))},
          {"mean", ms(mean)}};
}

}  // namespace

ordered_json metrics(const LlmRow& row, double sim_seconds, bool per_request) {
  std::vector<double> ttft, tpot, e2e;
  uint64_t prompt = 0, output = 0, ttft_ok = 0, tpot_ok = 0, both_ok = 0;
  for (const auto& r : row.finished) {
    ttft.push_back(r.ttft_ms());
    e2e.push_back(r.e2e_ms());
    const auto t = r.tpot_ms();
    if (t) tpot.push_back(*t);
    prompt += r.prompt_len;
    output += r.output_len;
    const bool a = r.ttft_ms() <= row.ttft_slo_ms;
    const bool b = !t || *t <= row.tpot_slo_ms;  // a one-token request has no TPOT to miss
    ttft_ok += a;
    tpot_ok += b;
    both_ok += a && b;
  }
  const double n = static_cast<double>(row.finished.size());
  const auto share = [&](uint64_t k) { return n > 0 ? ordered_json(jc::round_to(static_cast<double>(k) / n, 4)) : ordered_json(nullptr); };
  const double ttft99 = percentile(ttft, 99), tpot99 = percentile(tpot, 99);
  ordered_json j;
  j["name"] = row.name;
  j["requests"] = row.finished.size();
  j["ttft_ms"] = summary(ttft);
  j["tpot_ms"] = summary(tpot);
  j["e2e_ms"] = summary(e2e);
  j["prompt_tokens"] = prompt;
  j["output_tokens"] = output;
  j["output_tokens_per_s"] = sim_seconds > 0 ? jc::round_to(static_cast<double>(output) / sim_seconds, 3) : 0.0;
  j["total_tokens_per_s"] = sim_seconds > 0 ? jc::round_to(static_cast<double>(prompt + output) / sim_seconds, 3) : 0.0;
  j["slo"] = {{"ttft_ms", row.ttft_slo_ms}, {"tpot_ms", row.tpot_slo_ms}};
  j["slo_attainment"] = share(both_ok);
  j["ttft_attainment"] = share(ttft_ok);
  j["tpot_attainment"] = share(tpot_ok);
  // MLPerf's reading: the p99 of each metric within its objective.
  j["p99_meets_slo"] = !std::isnan(ttft99) && ttft99 <= row.ttft_slo_ms && (std::isnan(tpot99) || tpot99 <= row.tpot_slo_ms);
  j["steps"] = row.steps;
  j["mean_batched_tokens"] = row.steps ? jc::round_to(static_cast<double>(row.batched_tokens) / static_cast<double>(row.steps), 3) : 0.0;
  j["kv_preemptions"] = row.preemptions;
  j["step_ms"] = summary(row.step_ms);
  // Per GPU: the mean time a step's shard there waited at the collectives for the slowest shard
  // (one GPU's interference shows as the others' wait).
  ordered_json shards = ordered_json::array();
  for (std::size_t i = 0; i < row.gpus.size(); ++i) {
    const double wait = i < row.collective_wait_ms.size() ? row.collective_wait_ms[i] : 0.0;
    shards.push_back({{"gpu", row.gpus[i]},
                      {"collective_wait_ms_per_step", row.steps ? jc::round_ms(wait / static_cast<double>(row.steps)) : 0.0}});
  }
  j["shards"] = std::move(shards);
  if (per_request) {
    // [id, prompt tokens, output tokens, arrival ms, TTFT ms, TPOT ms or null, E2E ms, preemptions]
    ordered_json all = ordered_json::array();
    for (const auto& r : row.finished) {
      const auto t = r.tpot_ms();
      all.push_back({r.id, r.prompt_len, r.output_len, jc::round_ms(static_cast<double>(r.arrival) / 1e6),
                     jc::round_ms(r.ttft_ms()), t ? ordered_json(jc::round_ms(*t)) : ordered_json(nullptr),
                     jc::round_ms(r.e2e_ms()), r.preemptions});
    }
    j["per_request"] = std::move(all);
  }
  return j;
}

}  // namespace gpreempt::eval::des::llm
