// The daemon's GPU-model configuration text.
#include <gtest/gtest.h>

#include "sim/gpu/model_config.h"

namespace gpreempt::sim::gpu {
namespace {

TEST(ModelConfig, DefaultsToMi308x) {
  auto o = parse_model_config({});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->profile.name, "mi308x");
  EXPECT_EQ(o->profile.total_cus(), 80u);
  EXPECT_EQ(o->profile.hqd_slots(), 24u);
  EXPECT_EQ(o->profile.preemption_timeout_ns, 9'000'000'000);
}

TEST(ModelConfig, ReadsEveryVariable) {
  std::string err;
  auto o = parse_model_config({{"GPREEMPT_SIM_PROFILE", "MI300X"},
                               {"GPREEMPT_SIM_FAULTS", "timeout@2"},
                               {"GPREEMPT_SIM_PREEMPT_TIMEOUT_MS", "150"},
                               {"GPREEMPT_SIM_PARAMS", "save_bandwidth_gbps=100,unmap_latency_ns=5"},
                               {"GPREEMPT_SIM_SEED", "9"},
                               {"GPREEMPT_SIM_WG_JITTER", "0.1"}},
                              &err);
  ASSERT_TRUE(o) << err;
  EXPECT_EQ(o->profile.total_cus(), 304u);
  EXPECT_EQ(o->profile.preemption_timeout_ns, 150'000'000);
  EXPECT_DOUBLE_EQ(o->profile.save_bandwidth_gbps, 100.0);
  EXPECT_EQ(o->profile.unmap_latency_ns, 5);
  EXPECT_EQ(o->engine.seed, 9u);
  EXPECT_DOUBLE_EQ(o->engine.wg_jitter, 0.1);
  ASSERT_EQ(o->engine.faults.rules.size(), 1u);
}

TEST(ModelConfig, ErrorsNameTheVariableAndTheValue) {
  std::string err;
  EXPECT_FALSE(parse_model_config({{"GPREEMPT_SIM_PROFILE", "h100"}}, &err));
  EXPECT_NE(err.find("GPREEMPT_SIM_PROFILE"), std::string::npos);
  EXPECT_NE(err.find("h100"), std::string::npos);
  EXPECT_FALSE(parse_model_config({{"GPREEMPT_SIM_PARAMS", "warp_speed=9"}}, &err));
  EXPECT_NE(err.find("warp_speed"), std::string::npos);
  EXPECT_FALSE(parse_model_config({{"GPREEMPT_SIM_PREEMPT_TIMEOUT_MS", "soon"}}, &err));
  EXPECT_FALSE(parse_model_config({{"GPREEMPT_SIM_FAULTS", "boom@1"}}, &err));
  EXPECT_NE(err.find("GPREEMPT_SIM_FAULTS"), std::string::npos);
}

TEST(Profile, GraceUnitsAreThousandsOfShaderClocks) {
  const auto p = mi308x_profile();
  EXPECT_EQ(p.grace_ns(1), 704);       // 1000 clocks at 1420 MHz
  EXPECT_EQ(p.grace_ns(0), 704);       // the GFX9 code turns 0 into 1
  EXPECT_EQ(p.grace_ns(100), 70422);
  EXPECT_EQ(p.grace_ns(0xffffffffu), p.grace_ns(p.default_grace_kclk));
}

}  // namespace
}  // namespace gpreempt::sim::gpu
