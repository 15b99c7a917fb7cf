// Device profiles: lookup, GPU counts, internal consistency, and the MI308X values against the
// real captures of that machine (docs/sim-device-profiles.md lists every source).
#include <fixtures.h>

#include <regex>
#include <set>
#include <stdexcept>

#include "device_profile.h"
#include "common/error.h"

namespace gpreempt::sim {
namespace {

TEST(SimDeviceProfiles, LookupByNameAndClearErrorListingValidNames) {
  for (const auto& n : profile_names()) EXPECT_EQ(make_profile(n).name, n);
  try {
    make_profile("mi250");
    FAIL() << "unknown profile accepted";
  } catch (const gpreempt::Error& e) {  // the project's error type, like the rest of the code
    EXPECT_EQ(e.code(), EINVAL);
    const std::string what = e.what();
    EXPECT_NE(what.find("mi250"), std::string::npos) << what;
    for (const auto& n : profile_names()) EXPECT_NE(what.find(n), std::string::npos) << what;
  }
}

TEST(SimDeviceProfiles, GpuCountDefaultsToCapturedMachineAndIsBounded) {
  EXPECT_EQ(make_profile("mi308x").gpus.size(), 1u);
  EXPECT_EQ(make_profile("mi308x", 0).gpus.size(), 8u);
  EXPECT_EQ(make_profile("mi300x", 0).gpus.size(), 4u);
  EXPECT_EQ(make_profile("mi210", 0).gpus.size(), 1u);
  EXPECT_EQ(make_profile("mi300x", 8).gpus.size(), 8u);
  EXPECT_THROW(make_profile("mi308x", 9), gpreempt::Error);
}

TEST(SimDeviceProfiles, InternallyConsistent) {
  for (const auto& n : profile_names()) {
    const auto p = make_profile(n, 0);
    SCOPED_TRACE(n);
    // gfx_target_version = major*10000 + minor*100 + stepping of the gfx name (hex digits).
    std::smatch m;
    ASSERT_TRUE(std::regex_match(p.gfx_arch, m, std::regex("gfx([0-9]+)([0-9a-f])([0-9a-f])")));
    EXPECT_EQ(p.gfx_target_version, std::stoul(m[1]) * 10000 + std::stoul(m[2], nullptr, 16) * 100 +
                                        std::stoul(m[3], nullptr, 16));
    EXPECT_EQ(p.xcc_reg_offsets.size(), p.num_xcc);
    EXPECT_EQ(p.sdma_reg_bases.size(), p.num_sdma_engines + p.num_sdma_xgmi_engines);
    EXPECT_EQ(p.num_cp_queues, p.pipes_per_mec * (p.queues_per_pipe - p.first_kfd_queue));
    EXPECT_EQ(p.cu_count % p.num_xcc, 0u);
    std::set<uint32_t> ids;
    for (const auto& g : p.gpus) {
      EXPECT_NE(g.gpu_id, 0u);
      EXPECT_LE(g.gpu_id, 0xffffu);
      ids.insert(g.gpu_id);
    }
    EXPECT_EQ(ids.size(), p.gpus.size());
    EXPECT_EQ(p.ctl_stack_size % 4096, 0u);
    EXPECT_GT(p.cwsr_size, p.ctl_stack_size);
  }
  EXPECT_EQ(make_profile("mi300x").num_xcc, 8u);
  EXPECT_EQ(make_profile("mi300x").cu_count, 304u);
  EXPECT_EQ(make_profile("mi210").gfx_arch, "gfx90a");
  EXPECT_EQ(make_profile("mi210").cu_count, 104u);
}

TEST(SimDeviceProfiles, Mi308xMatchesCapturedGpuIdsAndCwsrSizes) {
  GPREEMPT_REQUIRE_SHARED();
  const auto hqds = gpreempt::testing::read_file(gpreempt::testing::shared_dir() / "realdata" /
                                                 "debugfs" / "01_mi308x_rocm702_hqds_full.txt");
  std::vector<uint32_t> captured;
  std::regex node(R"(Node (\d+), gpu_id ([0-9a-f]+):)");
  for (auto it = std::sregex_iterator(hqds.begin(), hqds.end(), node); it != std::sregex_iterator();
       ++it)
    captured.push_back(static_cast<uint32_t>(std::stoul((*it)[2], nullptr, 16)));
  const auto p = make_profile("mi308x", 0);
  ASSERT_EQ(captured.size(), p.gpus.size());
  for (std::size_t i = 0; i < captured.size(); ++i) EXPECT_EQ(p.gpus[i].gpu_id, captured[i]);
  // The captured MQDs: cp_hqd_cntl_stack_size 0x2000, cp_hqd_ctx_save_size 0xba6000 per XCC.
  const auto mqds = gpreempt::testing::read_file(gpreempt::testing::shared_dir() / "realdata" /
                                                 "debugfs" / "03_mi308x_rocm702_mqds.txt");
  EXPECT_NE(
      mqds.find(
          "    000002a0: 00000000 00000000 00000000 a4000000 00007f41 00000000 00002000 00002000"),
      std::string::npos);
  EXPECT_NE(mqds.find("    000002c0: 00002000 00ba6000"), std::string::npos);
  EXPECT_EQ(p.ctl_stack_size, 0x2000u);
  EXPECT_EQ(p.cwsr_size, 0xba6000u);
}

}  // namespace
}  // namespace gpreempt::sim
