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
  c.preempt = true;
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

TEST(Scenario, PreemptionCutsOnlineLatencyUnderOfflineLoad) {
  auto with = config(7);
  with.engine.wg_jitter = 0;
  auto without = with;
  without.preempt = false;
  const auto p = run_scenario(with);
  const auto n = run_scenario(without);
  auto mean = [](const std::vector<SimTime>& v) {
    double s = 0;
    for (auto x : v) s += static_cast<double>(x);
    return s / static_cast<double>(v.size());
  };
  ASSERT_FALSE(p.latencies_ns.empty());
  ASSERT_FALSE(n.latencies_ns.empty());
  // Without control each online kernel waits for 400 us offline workgroups to leave.
  EXPECT_LT(mean(p.latencies_ns), mean(n.latencies_ns));
  EXPECT_GT(p.runlist.size(), 0u);
  EXPECT_LT(p.offline_iterations, n.offline_iterations);
}

}  // namespace
}  // namespace gpreempt::sim::gpu
