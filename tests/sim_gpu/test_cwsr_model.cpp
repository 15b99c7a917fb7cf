// The state-bounded CWSR model (sim/gpu/cwsr_model.h): occupancy and saved bytes come from one
// register footprint and never exceed what a compute unit physically holds; the banded costs.
#include <gtest/gtest.h>

#include "engine_fixture.h"
#include "sim/gpu/cwsr_model.h"
#include "sim/gpu/kernel.h"
#include "sim/gpu/model_config.h"

namespace gpreempt::sim::gpu {
namespace {

KernelSpec with(KernelResources r, uint32_t items_per_wg = 256, const char* name = "probe") {
  KernelSpec k;
  k.name = name;
  k.grid = {items_per_wg * 64, 1, 1};
  k.workgroup = {items_per_wg, 1, 1};
  k.resources = r;
  return k;
}

TEST(CwsrModel, ContextSaveAreaPerCuIsTheKernelsSizing) {
  // kfd_queue.c: VGPR 0x80000 + SGPR 0x4000 + LDS 0x10000 + HWREG 0x1000, plus 8 B of control
  // stack and 32 B of debugger area per wave (32 per CU).
  const auto p = mi308x_profile();
  EXPECT_EQ(cwsr_bytes_per_cu(p), 0x95000u + 32u * 40u);
  // A whole MI308X: 46.6 MiB; MI300X: 177 MiB.
  EXPECT_EQ(cwsr_bytes_per_cu(p) * p.total_cus() / (1024 * 1024 / 10), 466u);
  const auto x = mi300x_profile();
  EXPECT_EQ(cwsr_bytes_per_cu(x) * x.total_cus() / (1024 * 1024), 177u);
}

TEST(CwsrModel, RegisterFootprintBoundsOccupancy) {
  const auto p = mi308x_profile();
  // 64 KiB of VGPRs per wave (128 VGPRs + 128 AGPRs): 2 waves per SIMD, 8 per CU.
  auto o = occupancy(p, with(resources_for(KernelKind::kMatrix)));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->waves_per_simd, 2u);
  EXPECT_EQ(o->wgs_per_cu, 2u);  // 4-wave workgroups
  // Few registers: the wave slots (8 per SIMD) bind.
  o = occupancy(p, with(resources_for(KernelKind::kVector)));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->waves_per_simd, 8u);
  EXPECT_EQ(o->wgs_per_cu, 8u);
  // LDS binds: 40 KiB per workgroup leaves room for one.
  o = occupancy(p, with({32, 0, 32, 40 * 1024}));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->wgs_per_cu, 1u);
}

TEST(CwsrModel, AWorkgroupThatCannotFitACuIsAnErrorNamingTheKernel) {
  const auto p = mi308x_profile();
  std::string err;
  // 16 waves of 512 registers each need 16 SIMDs' worth of VGPRs: a CU has 4.
  EXPECT_FALSE(occupancy(p, with({256, 256, 32, 0}, 1024, "huge_gemm"), &err));
  EXPECT_NE(err.find("huge_gemm"), std::string::npos) << err;
  EXPECT_FALSE(occupancy(p, with({32, 0, 32, 96 * 1024}, 256, "lds_hog"), &err));
  EXPECT_NE(err.find("lds_hog"), std::string::npos) << err;
  EXPECT_FALSE(occupancy(p, with({300, 0, 32, 0}, 64, "too_many_vgprs"), &err));
  EXPECT_NE(err.find("too_many_vgprs"), std::string::npos) << err;
  // The engine refuses it too, naming it.
  GpuEngine e(p, 1);
  e.add_queue({1, 1}, 7, false);
  try {
    e.submit_kernel({1, 1}, with({256, 256, 32, 0}, 1024, "huge_gemm"), nullptr);
    ADD_FAILURE() << "a kernel that cannot fit a CU was accepted";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("huge_gemm"), std::string::npos) << ex.what();
  }
}

TEST(CwsrModel, SavedBytesPerCuNeverExceedTheContextSaveArea) {
  for (const auto& p : {mi308x_profile(), mi300x_profile(), mi210_profile()}) {
    const uint64_t area = cwsr_bytes_per_cu(p);
    for (uint32_t v : {0u, 24u, 64u, 100u, 128u, 200u, 256u})
      for (uint32_t a : {0u, 64u, 128u, 256u})
        for (uint32_t s : {1u, 32u, 102u})
          for (uint32_t lds : {0u, 4096u, 20000u, 65536u})
            for (uint32_t items : {64u, 192u, 256u, 512u, 1024u}) {
              const auto o = occupancy(p, with({v, a, s, lds}, items));
              if (!o) continue;
              EXPECT_LE(o->wg_bytes * o->wgs_per_cu, area)
                  << p.name << " v" << v << " a" << a << " s" << s << " lds" << lds << " wg" << items;
            }
  }
}

TEST(CwsrModel, AFullDeviceSaveIsBoundedByTheDevicesArea) {
  // Fill an MI308X with the heaviest kernel that fits, suspend it, and compare the bytes saved.
  const auto p = mi308x_profile();
  EngineOptions opt;
  opt.remap_on_queue_change = false;
  GpuEngine e(p, 1, opt);
  e.add_queue({1, 1}, 7, false);
  KernelSpec gemm = with(resources_for(KernelKind::kMatrix), 256, "gemm");
  gemm.grid = {4 * 8 * p.total_cus() * 64, 1, 1};  // 4 rounds of 2 workgroups per CU
  gemm.wg_cost_ns = 10'000'000;
  e.submit_kernel({1, 1}, gemm, nullptr);
  e.advance_to(100'000);
  e.execute_runlist(0, {}, nullptr);
  e.run_until_idle(10'000'000'000);
  ASSERT_FALSE(e.records().empty());
  const auto& r = e.records().back();
  EXPECT_EQ(r.waves_saved, 8u * p.total_cus());
  EXPECT_GT(r.bytes_saved, 0u);
  EXPECT_LE(r.bytes_saved, cwsr_bytes_per_cu(p) * p.total_cus());
  EXPECT_EQ(r.save_ns, p.save_ns(r.bytes_saved));
}

TEST(CwsrModel, BandsOrderTheCostsAndTheConfigSelectsOne) {
  auto lo = mi308x_profile(), mid = mi308x_profile(), hi = mi308x_profile();
  apply_cost_band(lo, CostBand::kLow);
  apply_cost_band(hi, CostBand::kHigh);
  EXPECT_EQ(mid.cost_band, CostBand::kCentral);
  const uint64_t full = cwsr_bytes_per_cu(mid) * mid.total_cus();
  EXPECT_LT(lo.save_ns(full), mid.save_ns(full));
  EXPECT_LT(mid.save_ns(full), hi.save_ns(full));
  EXPECT_LT(lo.restore_ns(full), hi.restore_ns(full));
  EXPECT_LT(lo.unmap_latency_ns, hi.unmap_latency_ns);
  EXPECT_LT(lo.map_latency_ns, hi.map_latency_ns);
  EXPECT_LT(lo.grace_packet_ns, hi.grace_packet_ns);
  EXPECT_LT(lo.suspend_copy_ns, hi.suspend_copy_ns);

  std::string err;
  // The band applies first wherever it is written; a single override then wins.
  auto o = parse_model_config(
      {{"GPREEMPT_SIM_PARAMS", "unmap_latency_ns=7,cost_band=high"}}, &err);
  ASSERT_TRUE(o) << err;
  EXPECT_EQ(o->profile.cost_band, CostBand::kHigh);
  EXPECT_EQ(o->profile.map_latency_ns, hi.map_latency_ns);
  EXPECT_DOUBLE_EQ(o->profile.save_bandwidth_gbps, hi.save_bandwidth_gbps);
  EXPECT_EQ(o->profile.unmap_latency_ns, 7);
  o = parse_model_config({{"GPREEMPT_SIM_PARAMS", "cost_band=low"}}, &err);
  ASSERT_TRUE(o) << err;
  EXPECT_DOUBLE_EQ(o->profile.save_bandwidth_gbps, lo.save_bandwidth_gbps);
  EXPECT_FALSE(parse_model_config({{"GPREEMPT_SIM_PARAMS", "cost_band=medium"}}, &err));
  EXPECT_NE(err.find("medium"), std::string::npos);
}

TEST(CwsrModel, NonDefaultGraceCostsTwoMorePacketsAndASuspendWaitsForTheCopy) {
  auto p = mi308x_profile();
  EngineOptions opt;
  opt.remap_on_queue_change = false;
  GpuEngine e(p, 1, opt);
  e.add_queue({1, 1}, 7, false);
  SimTime returned = -1;
  e.execute_runlist(0xffffffffu, {}, [&](int) { returned = e.now(); });  // default grace
  e.run_until_idle(1'000'000'000);
  e.execute_runlist(0, {}, nullptr);            // grace 0: programmed, then reset
  e.run_until_idle(2'000'000'000);
  ASSERT_EQ(e.records().size(), 2u);
  const auto& def = e.records()[0];
  const auto& g0 = e.records()[1];
  EXPECT_EQ(def.unmap_started_ns - def.requested_ns, p.unmap_latency_ns);
  EXPECT_EQ(g0.unmap_started_ns - g0.requested_ns, p.unmap_latency_ns + p.grace_packet_ns);
  EXPECT_EQ(g0.resumed_ns - g0.stopped_ns, p.grace_packet_ns + p.map_latency_ns);
  // The SUSPEND's ioctl returns after the wave-state copy; the queues ran again before it.
  ASSERT_EQ(def.kind, RunlistKind::kSuspend);
  EXPECT_EQ(returned, def.resumed_ns + p.suspend_copy_ns);
}

}  // namespace
}  // namespace gpreempt::sim::gpu
