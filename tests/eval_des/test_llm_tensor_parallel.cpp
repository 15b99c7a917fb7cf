// An LLM server tensor-parallel across GPUs (spec online[].llm with "gpus", docs/llm.md "Tensor
// parallel across a node"): one scheduler, each step's shard kernels on every GPU, the collectives
// the step grid marks timed by the link model and gating every shard, so the slowest GPU sets the
// step for all; with free links and nothing beside it, the same steps as the one-GPU server.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "eval/des/llm/step_grid.h"
#include "eval/des/simulation.h"
#include "sim/gpu/profile.h"
#include "tiny_step_grid.h"

namespace gpreempt::eval::des {
namespace {

using nlohmann::json;
using sim::gpu::SimTime;

using testing::TinyGridFile;
constexpr double kBusBytes = testing::kTinyGridBusBytes;

// 40 requests through `grid` on GPUs `gpus` (a list: tensor parallel), the offline job on
// `offline_gpus` (none: the server alone).
json tp_point(const std::string& grid, const std::vector<uint32_t>& gpus, const std::vector<uint32_t>& offline_gpus,
              double latency_us = 20, double bus_gbps = 100) {
  json doc = json::parse(R"({
    "profile": "mi308x", "seed": 3, "gpus": 2, "baseline": "none",
    "online": [{"name": "llm", "arrival": {"kind": "poisson", "rate_hz": 400},
                "llm": {"max_num_seqs": 8, "max_num_batched_tokens": 64, "kv_blocks": 64}}],
    "record": {"timeline": false}
  })");
  json lengths = json::array();
  for (uint64_t i = 0; i < 40; ++i) lengths.push_back({20 + (i * 37) % 90, 5 + (i * 13) % 40});
  doc["online"][0]["gpus"] = gpus;
  doc["online"][0]["requests"] = 40;
  doc["online"][0]["llm"]["steps"] = grid;
  doc["online"][0]["llm"]["lengths"] = lengths;
  if (gpus.size() > 1) doc["online"][0]["allreduce"] = {{"us", latency_us}, {"bus_gbps", bus_gbps}};
  for (uint32_t g : offline_gpus)
    doc["offline"].push_back({{"name", "train" + std::to_string(g)}, {"gpu", g},
                              {"kernels", json::array({{{"name", "gemm"}, {"duration_us", 3000}, {"cus", 80}, {"rounds", 4}}})}});
  return doc;
}

TEST(DesLlmTp, ACollectiveLastsItsLatencyPlusBusBytesAndHoldsTheNextKernel) {
  TinyGridFile f(2);
  const auto g = llm::StepGrid::load(f.path, "online[0].llm.steps");
  EXPECT_EQ(g->tp(), 2u);
  const auto p = sim::gpu::mi308x_profile();
  const llm::CollectiveCost cost{20, 100};  // 20 µs + 4 MB at 100 GB/s = 60 µs
  const Program prog = g->program({16, 2, 64}, p, true, cost);
  // head norm | mm ‖ attn+silu ‖ | mm ‖ attn+silu ‖ | tail norm: a run of vector kernels ends at
  // a collective, so the tail's norm stays apart.
  ASSERT_EQ(prog.steps.size(), 6u);
  const SimTime want = 60'000;
  for (uint32_t i : {1u, 2u, 3u, 4u}) {
    EXPECT_EQ(prog.steps[i].collective_ns, want) << "step " << i;
    EXPECT_EQ(prog.steps[i + 1].after, std::vector<uint32_t>{i}) << "step " << i + 1 << " waits for it";
  }
  EXPECT_EQ(prog.steps[0].collective_ns, 0);
  EXPECT_EQ(prog.steps[5].collective_ns, 0);
  // The step's time alone counts the collectives.
  EXPECT_EQ(prog.nominal_ns, g->program({16, 2, 64}, p, true, {}).nominal_ns + 4 * want);
}

TEST(DesLlmTp, WithFreeLinksAndNothingBesideItTheShardsServeAsOneGpuDoes) {
  TinyGridFile one(1), two(2);
  const auto single = run_simulation(parse_spec(tp_point(one.path, {0}, {})));
  // Collectives of no latency at a bandwidth that makes their bytes cost under a nanosecond.
  const auto tp = run_simulation(parse_spec(tp_point(two.path, {0, 1}, {}, 0, 1e6)));
  ASSERT_EQ(single.llm.size(), 1u);
  ASSERT_EQ(tp.llm.size(), 1u);
  ASSERT_EQ(single.llm[0].finished.size(), 40u);
  ASSERT_EQ(tp.llm[0].finished.size(), 40u);
  EXPECT_EQ(tp.llm[0].steps, single.llm[0].steps);
  // Each collective still synchronises: at least 1 ns, and its 4 MB at 1e6 GB/s take 4 ns; a step
  // has 4, so a request is late by at most 20 ns per step of the run.
  const double tolerance_ms = static_cast<double>(tp.llm[0].steps) * 4 * 5e-6;
  for (std::size_t i = 0; i < 40; ++i) {
    const auto& a = single.llm[0].finished[i];
    const auto& b = tp.llm[0].finished[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_NEAR(a.ttft_ms(), b.ttft_ms(), tolerance_ms) << "request " << a.id;
    EXPECT_NEAR(a.e2e_ms(), b.e2e_ms(), tolerance_ms) << "request " << a.id;
  }
  ASSERT_EQ(tp.llm[0].gpus, (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ(single.llm[0].gpus, (std::vector<uint32_t>{0}));
}

TEST(DesLlmTp, TheSlowestShardSetsEveryShardsStep) {
  TinyGridFile f(2);
  const auto alone = run_simulation(parse_spec(tp_point(f.path, {0, 1}, {})));
  // The offline job shares GPU 1 only: GPU 1's shard is slowed, and GPU 0's, alone on its GPU,
  // waits for it at every collective.
  const auto contended = run_simulation(parse_spec(tp_point(f.path, {0, 1}, {1})));
  ASSERT_EQ(alone.llm[0].finished.size(), 40u);
  ASSERT_EQ(contended.llm[0].finished.size(), 40u);
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  EXPECT_GT(mean(contended.llm[0].step_ms), 1.5 * mean(alone.llm[0].step_ms));
  // Alone, the identical shards reach every collective together.
  EXPECT_NEAR(alone.llm[0].collective_wait_ms[0], 0, 1e-6);
  EXPECT_NEAR(alone.llm[0].collective_wait_ms[1], 0, 1e-6);
  // Contended, GPU 0 idles at the collectives for GPU 1, never the other way round.
  const double gpu0 = contended.llm[0].collective_wait_ms[0], gpu1 = contended.llm[0].collective_wait_ms[1];
  EXPECT_GT(gpu0, 0.25 * mean(contended.llm[0].step_ms) * static_cast<double>(contended.llm[0].steps));
  EXPECT_NEAR(gpu1, 0, 1e-6);
}

TEST(DesLlmTp, AJobGpreemptCannotSuspendOnOneGpuStallsTheShardsOfTheOthers) {
  TinyGridFile f(2);
  auto both = tp_point(f.path, {0, 1}, {0, 1});
  both["baseline"] = "gpreempt-hint";
  auto one = both;
  one["offline"][1]["managed"] = false;  // GPU 1's job: the daemon never hears of it
  const auto managed = run_simulation(parse_spec(both));
  const auto unmanaged = run_simulation(parse_spec(one));
  ASSERT_EQ(unmanaged.llm[0].finished.size(), 40u);
  bool gpu1_suspended = false;
  for (const auto& d : managed.decisions) gpu1_suspended |= d.gpu == 1 && d.action == "suspend";
  EXPECT_TRUE(gpu1_suspended);
  ASSERT_FALSE(unmanaged.decisions.empty());
  for (const auto& d : unmanaged.decisions) EXPECT_EQ(d.gpu, 0u) << d.action << " " << d.reason;
  // GPU 0's offline job is suspended, yet its shard idles at the collectives for GPU 1's (which
  // waits only where GPU 0's suspensions and resumptions stall GPU 0's shard).
  const auto& w = unmanaged.llm[0].collective_wait_ms;
  EXPECT_GT(w[0], 10 * managed.llm[0].collective_wait_ms[0] + 1.0);
  EXPECT_GT(w[0], 5 * w[1]) << "GPU 0 waited " << w[0] << " ms, GPU 1 " << w[1] << " ms";
}

TEST(DesLlmTp, SpecAndGridMismatchesNameTheField) {
  TinyGridFile one(1), two(2);
  const auto path_of = [](const json& doc, bool run) {
    try {
      const Spec s = parse_spec(doc);
      if (run) (void)run_simulation(s);
    } catch (const SpecError& e) {
      return e.path();
    }
    return std::string("accepted");
  };
  // A shard's grid on one GPU, a whole model's on two.
  EXPECT_EQ(path_of(tp_point(two.path, {0}, {}), true), "online[0].llm.steps");
  EXPECT_EQ(path_of(tp_point(one.path, {0, 1}, {}), true), "online[0].llm.steps");
  // The grid places an LLM server's collectives; no bus bandwidth would make them free.
  auto doc = tp_point(two.path, {0, 1}, {});
  doc["online"][0]["allreduce"]["every"] = 2;
  EXPECT_EQ(path_of(doc, false), "online[0].allreduce.every");
  doc = tp_point(two.path, {0, 1}, {});
  doc["online"][0]["allreduce"].erase("bus_gbps");
  EXPECT_EQ(path_of(doc, false), "online[0].allreduce");
  // Bytes belong to a grid's collectives only.
  doc = json::parse(R"({"gpus": 2, "online": [{"name": "cnn", "gpus": [0, 1], "arrival": {"kind": "periodic",
    "rate_hz": 10}, "kernels": [{"name": "k", "duration_us": 10}], "allreduce": {"us": 5, "bus_gbps": 10}}]})");
  EXPECT_EQ(path_of(doc, false), "online[0].allreduce.bus_gbps");
  // Only a daemon can leave a job unmanaged.
  doc = tp_point(two.path, {0, 1}, {1});
  doc["offline"][0]["managed"] = false;
  EXPECT_EQ(path_of(doc, false), "offline[0].managed");
  doc["baseline"] = "gpreempt-hint";
  EXPECT_EQ(path_of(doc, false), "accepted");
}

}  // namespace
}  // namespace gpreempt::eval::des
