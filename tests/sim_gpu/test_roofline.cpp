// The roofline that prices real models' kernels, and the workgroup cost that makes the engine run
// a kernel for exactly the priced time.
#include <gtest/gtest.h>

#include "engine_fixture.h"
#include "sim/gpu/roofline.h"

namespace gpreempt::sim::gpu {
namespace {

using testing::quiet;
using testing::Recorder;

KernelShape items(uint32_t n, uint32_t wg = 256) { return {{n, 1, 1}, {wg, 1, 1}}; }

TEST(Roofline, LargeGemmIsBoundByTheMatrixRate) {
  const auto p = mi308x_profile();
  const double flops = 2.0 * 2048 * 2048 * 2048;
  // 256 fp32 FLOPs per CU per clock × 80 CUs × 1.42 GHz × 70 % = 20.36 TFLOPS.
  const double expect_ns = flops / (256.0 * 80 * 1.42 * 0.7);
  const SimTime t = roofline_ns(p, items(1024 * 256), flops, 3 * 2048.0 * 2048 * 4,
                                MathType::kFp32, true);
  EXPECT_NEAR(static_cast<double>(t), expect_ns, 1.0);
  // FP16 matrix cores are 8× faster on CDNA3.
  EXPECT_NEAR(static_cast<double>(roofline_ns(p, items(1024 * 256), flops, 0, MathType::kFp16,
                                              true)),
              expect_ns / 8, 1.0);
}

TEST(Roofline, ElementwiseIsBoundByBandwidthAndSmallGridsUseFewerSimds) {
  const auto p = mi308x_profile();
  const double bytes = 64.0 * 1024 * 1024;
  const SimTime full = roofline_ns(p, items(1 << 24), 1 << 24, bytes, MathType::kFp32, false);
  EXPECT_NEAR(static_cast<double>(full), bytes / (5300 * 0.8), 1.0);
  // 32 waves on a device of 320 SIMDs: a tenth of the device, ten times as long.
  const SimTime small = roofline_ns(p, items(32 * 64), 0, bytes, MathType::kFp32, false);
  EXPECT_NEAR(static_cast<double>(small), 10.0 * static_cast<double>(full), 10.0);
}

TEST(Roofline, WorkgroupCostMakesTheEngineRunThePricedTime) {
  const auto p = mi308x_profile();
  // 1024 workgroups of 4 waves: 256 per XCC, 160 fit at once → 2 rounds (the gemm2048 preset).
  const KernelShape shape = items(1024 * 256);
  EXPECT_EQ(workgroup_rounds(p, shape), 2u);
  EXPECT_EQ(workgroup_rounds(p, items(256)), 1u);
  const SimTime busy = 1'400'000;
  GpuEngine e(p, 1, quiet());
  const QueueKey q{10, 0};
  e.add_queue(q, 7, false);
  Recorder r;
  KernelSpec k;
  k.name = "priced";
  k.grid = shape.grid;
  k.workgroup = shape.workgroup;
  k.wg_cost_ns = wg_cost_for(p, shape, busy);
  e.submit_kernel(q, k, r.cb());
  e.run_until_idle(1'000'000'000);
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0].finished - r.done[0].started, p.packet_overhead_ns + busy);
}

}  // namespace
}  // namespace gpreempt::sim::gpu
