// The tensor-parallel collective (spec `online[].allreduce`): after each synchronising kernel the
// shards wait for the slowest one, then for the all-reduce, so interference on one GPU delays the
// shards on every other GPU of the request.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/latency_summary.h"
#include "eval/des/simulation.h"
#include "points.h"

namespace gpreempt::eval::des {
namespace {

using sim::gpu::SimTime;

// Two GPUs; the online client tensor-parallel over both; the offline job on GPU 1 only.
nlohmann::ordered_json tp2_point(const std::string& baseline, double allreduce_us, bool offline = true) {
  auto doc = testing::small_point(baseline, 60);
  doc["gpus"] = 2;
  doc["online"][0].erase("gpu");
  doc["online"][0]["gpus"] = {0, 1};
  doc["online"][0]["arrival"] = {{"kind", "periodic"}, {"rate_hz", 100}};
  if (allreduce_us > 0) doc["online"][0]["allreduce"] = {{"every", 1}, {"us", allreduce_us}};
  doc["offline"][0]["gpu"] = 1;
  if (!offline) doc.erase("offline");
  return doc;
}

struct Kernel {
  SimTime started, finished;
};
class OnlineKernels : public Observer {
 public:
  std::vector<Kernel> gpu[2];
  void kernel_ran(uint32_t g, const std::string&, bool online, SimTime, SimTime started, SimTime finished) override {
    if (online) gpu[g].push_back({started, finished});
  }
};

TEST(DesAllReduce, EachCollectiveAddsItsLengthToARequestAlone) {
  const auto plain = run_simulation(parse_spec(tp2_point("none", 0, false)));
  const auto coupled = run_simulation(parse_spec(tp2_point("none", 50, false)));
  ASSERT_EQ(plain.latencies_ms.size(), 60u);
  ASSERT_EQ(coupled.latencies_ms.size(), 60u);
  // Three kernels, one all-reduce after each: 150 µs more per request, nothing else.
  for (std::size_t i = 0; i < plain.latencies_ms.size(); ++i)
    EXPECT_NEAR(coupled.latencies_ms[i] - plain.latencies_ms[i], 0.150, 1e-9) << "request " << i;
}

TEST(DesAllReduce, TheSlowestShardGatesEveryShardsNextKernel) {
  constexpr SimTime kAllReduce = 50'000;
  OnlineKernels k;
  const auto r = run_simulation(parse_spec(tp2_point("none", 50)), &k);
  ASSERT_EQ(r.latencies_ms.size(), 60u);
  ASSERT_EQ(k.gpu[0].size(), k.gpu[1].size());
  int waited_for_gpu1 = 0;
  for (std::size_t i = 0; i + 1 < k.gpu[0].size(); ++i) {
    if (i % 3 == 2) continue;  // the request's last kernel: the next one is another request's
    const SimTime both_done = std::max(k.gpu[0][i].finished, k.gpu[1][i].finished);
    EXPECT_GE(k.gpu[0][i + 1].started, both_done + kAllReduce) << "kernel " << i;
    EXPECT_GE(k.gpu[1][i + 1].started, both_done + kAllReduce) << "kernel " << i;
    waited_for_gpu1 += k.gpu[1][i].finished > k.gpu[0][i].finished;
  }
  // The offline job on GPU 1 slows that shard: GPU 0's shard, alone on its GPU, waits for it.
  EXPECT_GT(waited_for_gpu1, 10);
}

TEST(DesAllReduce, SuspendingOnTheOneContendedGpuHelpsTheWholeRequest) {
  // Offline shares GPU 1 only, so gpreempt suspends there only (no decision names GPU 0), yet
  // the request — every step of which waits for GPU 1's shard — is faster than without control.
  auto p50 = [](const RunResult& r) { return gpreempt::percentile(r.latencies_ms, 50); };
  const auto none = run_simulation(parse_spec(tp2_point("none", 50)));
  const auto hint = run_simulation(parse_spec(tp2_point("gpreempt-hint", 50)));
  EXPECT_LT(p50(hint), p50(none));
  ASSERT_FALSE(hint.decisions.empty());
  for (const auto& d : hint.decisions) EXPECT_EQ(d.gpu, 1u) << d.action << " " << d.reason;
}

TEST(DesAllReduce, ASingleGpuClientCannotHaveACollective) {
  auto doc = testing::small_point("none", 10);
  doc["online"][0]["allreduce"] = {{"us", 20}};
  try {
    parse_spec(doc);
    ADD_FAILURE() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.path(), "online[0].allreduce");
  }
  doc = tp2_point("none", 20);
  doc["online"][0]["allreduce"]["every"] = 0;
  EXPECT_THROW(parse_spec(doc), SpecError);
}

}  // namespace
}  // namespace gpreempt::eval::des
