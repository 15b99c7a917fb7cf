// Same seed, same simulated history; a different seed, a different one.
#include <gtest/gtest.h>

#include "engine_fixture.h"
#include "sim/gpu/scenario.h"

namespace gpreempt::sim::gpu {
namespace {

ScenarioConfig config(uint64_t seed) {
  ScenarioConfig c;
  c.duration_ns = 200'000'000;
  c.seed = seed;
  c.engine.seed = seed;
  c.engine.wg_jitter = 0.2;
  c.online_rate_hz = 200;
  c.online_request = {testing::kernel(8, 20'000, "fc1"), testing::kernel(8, 20'000, "fc2")};
  c.offline_iteration = {testing::kernel(1280, 400'000, "gemm")};
  return c;
}

TEST(Determinism, IdenticalSeedsGiveIdenticalRuns) {
  const auto a = run_scenario(config(42));
  const auto b = run_scenario(config(42));
  ASSERT_GT(a.latencies_ns.size(), 10u);
  EXPECT_EQ(a.latencies_ns, b.latencies_ns);
  EXPECT_EQ(a.offline_iterations, b.offline_iterations);
  EXPECT_EQ(a.events, b.events);
  ASSERT_EQ(a.runlist.size(), b.runlist.size());
  for (std::size_t i = 0; i < a.runlist.size(); ++i) {
    EXPECT_EQ(to_json(a.runlist[i]), to_json(b.runlist[i])) << "record " << i;
  }
}

TEST(Determinism, DifferentSeedsGiveDifferentRuns) {
  const auto a = run_scenario(config(42));
  const auto b = run_scenario(config(43));
  EXPECT_NE(a.latencies_ns, b.latencies_ns);
}

// Preemption under the real policy is tested in tests/eval_des (the DES with lib/sched).

}  // namespace
}  // namespace gpreempt::sim::gpu
