// The DES's LLM server (eval/des/llm/): a step's place on the step grid, the interpolation of its
// kernels, the merged vector kernels keeping a step's time, and a served run — every request
// answered through KV-cache waits, each bracketed by one hint, requests overlapping. (The batching
// rules themselves are compared with the live server's scheduler by
// tests/python/test_llm_des_parity.py.)
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include <unistd.h>

#include "eval/des/llm/step_grid.h"
#include "eval/des/simulation.h"
#include "sim/gpu/profile.h"
#include "tiny_step_grid.h"

namespace gpreempt::eval::des {
namespace {

using nlohmann::json;

using testing::TinyGridFile;

TEST(DesLlm, StepShapePadsDecodeGroupsLikeTheModelsAttentionPlan) {
  llm::Batch b;
  // Decodes at contexts 3, 40, 100 (two groups of at most two: {3, 40} padded to 41 → 48 tokens,
  // {100} to 101 → 112) and two prefill chunks of 20 and 7 tokens.
  b.work = {{0, 1, 100, true}, {1, 20, 0, false}, {2, 1, 3, true}, {3, 1, 40, true}, {4, 7, 30, true}};
  const auto s = llm::step_shape(b, 16, 2);
  EXPECT_EQ(s.prefill_tokens, 27u);
  EXPECT_EQ(s.decode_seqs, 3u);
  EXPECT_DOUBLE_EQ(s.decode_len, (48.0 * 2 + 112.0) / 3);
}

TEST(DesLlm, KernelsAreInterpolatedBetweenGridPointsAndZeroIsExact) {
  TinyGridFile f;
  const auto g = llm::StepGrid::load(f.path, "online[0].llm.steps");
  // Halfway between prefill 16 and 64, one decode, length between 16 and 64 at a quarter.
  const auto ops = g->ops({40, 1, 28});
  ASSERT_EQ(ops.size(), 1u + 2 * 3 + 1);
  EXPECT_EQ(ops[1].name, "mm");
  EXPECT_DOUBLE_EQ(ops[1].flops, 1e9 * (40 + 1));
  EXPECT_DOUBLE_EQ(ops[2].bytes, 1e6 * (1 * 28 + (16.0 * 16 + 64.0 * 64) / 2 * 1.0));
  // No prefill: the decode-only points alone, however close a prefill point is.
  const auto dec = g->ops({0, 2, 64});
  EXPECT_DOUBLE_EQ(dec[1].flops, 1e9 * 2);
  // Beyond the last point: extrapolated from the last two.
  EXPECT_DOUBLE_EQ(g->ops({112, 0, 16})[1].flops, 1e9 * 112);
}

TEST(DesLlm, MergedVectorKernelsKeepTheStepsTime) {
  TinyGridFile f;
  const auto g = llm::StepGrid::load(f.path, "online[0].llm.steps");
  const auto p = sim::gpu::mi308x_profile();
  const llm::StepShape s{16, 2, 64};
  const Program each = g->program(s, p, false);
  const Program merged = g->program(s, p, true);
  // head norm | mm | attn+silu | mm | attn+silu+tail norm
  EXPECT_EQ(each.steps.size(), 8u);
  EXPECT_EQ(merged.steps.size(), 5u);
  EXPECT_EQ(merged.nominal_ns, each.nominal_ns);
}

// A served run: `requests` requests at `rate` through the tiny grid with a KV cache of `blocks`.
json llm_point(const std::string& grid, const std::string& baseline, uint64_t blocks, uint64_t requests = 60) {
  json doc = json::parse(R"({
    "profile": "mi308x", "seed": 3,
    "online": [{"name": "llm", "gpu": 0, "arrival": {"kind": "poisson", "rate_hz": 400},
                "llm": {"max_num_seqs": 8, "max_num_batched_tokens": 64}}],
    "offline": [{"name": "train", "gpu": 0,
                 "kernels": [{"name": "gemm", "duration_us": 3000, "cus": 80, "rounds": 4}]}],
    "record": {"timeline": false}
  })");
  json lengths = json::array();
  for (uint64_t i = 0; i < requests; ++i) lengths.push_back({20 + (i * 37) % 90, 5 + (i * 13) % 40});
  doc["baseline"] = baseline;
  doc["online"][0]["requests"] = requests;
  doc["online"][0]["llm"]["steps"] = grid;
  doc["online"][0]["llm"]["lengths"] = lengths;
  doc["online"][0]["llm"]["kv_blocks"] = blocks;
  return doc;
}

class Hints : public Observer {
 public:
  std::map<uint64_t, int> started, finished;
  int open = 0, most_open = 0;
  void scheduler_event(sched::Time, const sched::Event& e) override {
    if (const auto* s = std::get_if<sched::event::RequestStarted>(&e)) {
      ++started[s->request];
      most_open = std::max(most_open, ++open);
    } else if (const auto* f = std::get_if<sched::event::RequestFinished>(&e)) {
      ++finished[f->request];
      --open;
    }
  }
};

TEST(DesLlm, EveryRequestIsServedThroughKvWaitsEachBracketedByOneHint) {
  TinyGridFile f;
  // 12 blocks of 16 tokens: a few requests at a time; the rest wait (and running ones that cannot
  // grow are preempted and recomputed), none is lost.
  Hints h;
  const RunResult r = run_simulation(parse_spec(llm_point(f.path, "gpreempt-hint", 12)), &h);
  ASSERT_EQ(r.llm.size(), 1u);
  const auto& l = r.llm[0];
  EXPECT_EQ(l.finished.size(), 60u);
  EXPECT_GT(l.preemptions, 0u);
  for (const auto& q : l.finished) {
    EXPECT_EQ(q.generated, q.output_len);
    EXPECT_LE(q.ttft_ms(), q.e2e_ms());
  }
  EXPECT_EQ(h.started.size(), 60u);
  EXPECT_EQ(h.finished.size(), 60u);
  for (const auto& [id, n] : h.started) EXPECT_EQ(n, 1) << id;
  for (const auto& [id, n] : h.finished) EXPECT_EQ(n, 1) << id;
  EXPECT_GT(h.most_open, 1);  // requests overlap: the Runtime counts the open ones
  EXPECT_EQ(h.open, 0);
  EXPECT_GT(r.suspensions, 0u);
}

// Tokens are reported as `gpreempt.sim.serve --hint` reports them: the first, every 16th, and the
// count with the end (just before it), so the scheduler measures TTFT and TPOT.
class Tokens : public Observer {
 public:
  std::map<uint64_t, std::vector<std::pair<uint64_t, bool>>> reports;  // request → (count, at_end)
  std::map<uint64_t, bool> end_before_finish;
  void scheduler_event(sched::Time, const sched::Event& e) override {
    if (const auto* p = std::get_if<sched::event::RequestProgress>(&e))
      reports[p->request].emplace_back(p->tokens, p->at_end);
    if (const auto* f = std::get_if<sched::event::RequestFinished>(&e))
      end_before_finish[f->request] = !reports[f->request].empty() && reports[f->request].back().second;
  }
};

TEST(DesLlm, TokensAreReportedAsTheLiveServerReportsThem) {
  TinyGridFile f;
  Tokens t;
  const RunResult r = run_simulation(parse_spec(llm_point(f.path, "gpreempt-hint", 4096)), &t);
  ASSERT_EQ(r.llm[0].finished.size(), 60u);
  for (const auto& q : r.llm[0].finished) {
    const auto& rep = t.reports[q.id];
    ASSERT_FALSE(rep.empty()) << q.id;
    EXPECT_EQ(rep.front(), std::make_pair(uint64_t{1}, false)) << "the first token, " << q.id;
    EXPECT_EQ(rep.back(), std::make_pair(uint64_t{q.output_len}, true)) << "the end's count, " << q.id;
    std::vector<uint64_t> middle;
    for (std::size_t i = 1; i + 1 < rep.size(); ++i) middle.push_back(rep[i].first);
    std::vector<uint64_t> want;
    for (uint64_t n = 16; n <= q.output_len; n += 16) want.push_back(n);
    EXPECT_EQ(middle, want) << q.id;
    EXPECT_TRUE(t.end_before_finish[q.id]) << q.id;
  }
}

// With TTFT and TPOT objectives (policy.slo, gpreemptd's keys) the objective-driven policy spends
// fewer suspensions on requests that meet them easily than a suspension per request.
TEST(DesLlm, TtftAndTpotObjectivesSpendFewerSuspensions) {
  TinyGridFile f;
  // Requests far enough apart that each is a suspension of its own under per-request protection.
  auto doc = llm_point(f.path, "gpreempt-hint", 4096);
  doc["online"][0]["arrival"]["rate_hz"] = 20;
  const RunResult every = run_simulation(parse_spec(doc));
  // p90: a window of 1 s at 20 requests/s holds the 20 samples a p90 needs to be judged.
  doc["policy"] = {{"slo", {{"ttft_p90_ms", 1e5}, {"tpot_p90_ms", 1e5}, {"window_s", 1}}}};
  const Spec spec = parse_spec(doc);
  ASSERT_TRUE(spec.policy.slo_ttft && spec.policy.slo_tpot);
  EXPECT_FALSE(spec.policy.slo_percentile) << "no request-latency goal was stated";
  const RunResult lax = run_simulation(spec);
  EXPECT_GT(every.suspensions, 0u);
  EXPECT_LT(lax.suspensions, every.suspensions);
}

TEST(DesLlm, ABiggerKvCacheWaitsLessAndPreemptsNone) {
  TinyGridFile f;
  const RunResult small = run_simulation(parse_spec(llm_point(f.path, "none", 12)));
  const RunResult big = run_simulation(parse_spec(llm_point(f.path, "none", 4096)));
  EXPECT_EQ(big.llm[0].preemptions, 0u);
  EXPECT_GT(small.llm[0].preemptions, 0u);
  double small_ttft = 0, big_ttft = 0;
  for (const auto& q : small.llm[0].finished) small_ttft += q.ttft_ms();
  for (const auto& q : big.llm[0].finished) big_ttft += q.ttft_ms();
  EXPECT_LT(big_ttft, small_ttft);
}

TEST(DesLlm, SpecNamesTheBadField) {
  TinyGridFile f;
  {
    auto doc = llm_point(f.path, "gpreempt-hint", 12);
    doc["policy"] = {{"slo", {{"ttft_p99_ms", 500}, {"ttft_p90_ms", 400}}}};
    EXPECT_THROW(parse_spec(doc), SpecError);
    doc["policy"] = {{"slo", {{"tbt_p99_ms", 5}}}};
    try {
      parse_spec(doc);
      ADD_FAILURE() << "an unknown slo key";
    } catch (const SpecError& e) {
      EXPECT_EQ(e.path(), "policy.slo.tbt_p99_ms");
    }
  }
  auto doc = llm_point(f.path, "none", 12);
  doc["online"][0]["requests"] = 61;
  try {
    (void)parse_spec(doc);
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path(), "online[0].requests");
  }
  doc = llm_point(f.path, "none", 12);
  doc["online"][0]["kernels"] = json::array({{{"name", "k"}, {"duration_us", 1}}});
  EXPECT_THROW((void)parse_spec(doc), SpecError);
}

}  // namespace
}  // namespace gpreempt::eval::des
