// GPU geometry has one owner (sim/device/gpu_geometry.h): the KFD side's DeviceProfile and the
// timing model's GpuProfile derive from it, so the DES, kfdsimd's model and the topology the
// simulated KFD reports cannot disagree.
#include <gtest/gtest.h>

#include "sim/device/device_profile.h"
#include "sim/device/gpu_geometry.h"
#include "sim/gpu/profile.h"

namespace gpreempt::sim {
namespace {

TEST(GpuGeometry, DeviceAndTimingProfilesDeriveTheSameGeometry) {
  ASSERT_EQ(std::size(kGpuGeometries), gpu::profile_names().size());
  for (const auto& name : gpu::profile_names()) {
    SCOPED_TRACE(name);
    const GpuGeometry* g = gpu_geometry(name);
    ASSERT_NE(g, nullptr);
    const DeviceProfile d = make_profile(name, 1);
    const gpu::GpuProfile t = *gpu::profile_by_name(name);
    EXPECT_EQ(d.num_xcc, t.num_xcc);
    EXPECT_EQ(d.cu_count, t.total_cus());
    EXPECT_EQ(d.simd_per_cu, t.simds_per_cu);
    EXPECT_EQ(d.simd_per_cu * d.max_waves_per_simd, t.max_waves_per_cu);
    EXPECT_EQ(d.wave_front_size, t.wave_size);
    EXPECT_EQ(d.max_engine_clk_fcompute, t.clock_mhz);
    EXPECT_EQ(d.gfx_arch, t.gfx_target);
    EXPECT_EQ(d.pipes_per_mec, t.compute_pipes);
    EXPECT_EQ(d.queues_per_pipe - d.first_kfd_queue, t.queues_per_pipe);
    EXPECT_EQ(d.num_cp_queues, t.hqd_slots());
    // ... and both are the table's numbers.
    EXPECT_EQ(d.cu_count, g->cu_count());
    EXPECT_EQ(t.clock_mhz, g->clock_mhz);
  }
  EXPECT_EQ(gpu_geometry("mi308x")->cu_count(), 80u);  // rocminfo "Compute Unit: 80"
}

}  // namespace
}  // namespace gpreempt::sim
