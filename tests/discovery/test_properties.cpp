#include <gtest/gtest.h>

#include "discovery/json.h"
#include "discovery/properties.h"
#include "fixtures.h"

using namespace gpreempt::discovery;

TEST(Properties, GfxTargetNames) {
  EXPECT_EQ(gfx_target_name(90402).value(), "gfx942");
  EXPECT_EQ(gfx_target_name(90010).value(), "gfx90a");
  EXPECT_EQ(gfx_target_name(110001).value(), "gfx1101");
  EXPECT_EQ(gfx_target_name(90008).value(), "gfx908");
  EXPECT_FALSE(gfx_target_name(0).has_value());
  EXPECT_FALSE(gfx_target_name(91700).has_value());  // minor 17 has no single hex digit
}

TEST(Properties, GpuNodeFromExampleTree) {
  GPREEMPT_REQUIRE_SHARED();
  auto path = gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd/topology/nodes/1/properties";
  auto p = decode_properties(gpreempt::testing::read_file(path), "nodes/1/properties");
  EXPECT_TRUE(p.complete);
  EXPECT_TRUE(p.diagnostics.empty());
  EXPECT_TRUE(p.gpu);
  EXPECT_EQ(p.compute_units.value(), 110u);  // simd_count 440 / simd_per_cu 4
  EXPECT_EQ(p.gfx_target.value(), "gfx90a");
  EXPECT_EQ(p.num_xcc.value(), 1u);
  EXPECT_EQ(p.properties.at("unique_id"), 1234567890123456789ull);
  auto j = to_json(p);
  EXPECT_EQ(j["gfx_target"], "gfx90a");
  EXPECT_EQ(j["compute_units"], 110);
  EXPECT_EQ(j["properties"]["num_cp_queues"], 24);
}

TEST(Properties, CpuNodeHasNoComputeUnitsOrTarget) {
  GPREEMPT_REQUIRE_SHARED();
  auto path = gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd/topology/nodes/0/properties";
  auto p = decode_properties(gpreempt::testing::read_file(path), "nodes/0/properties");
  EXPECT_TRUE(p.complete);
  EXPECT_FALSE(p.gpu);
  EXPECT_FALSE(p.compute_units.has_value());
  EXPECT_FALSE(p.gfx_target.has_value());
  auto j = to_json(p);
  EXPECT_TRUE(j["compute_units"].is_null());
  EXPECT_TRUE(j["gfx_target"].is_null());
}

TEST(Properties, OldKernelWithoutNewerKeysInAnotherOrder) {
  const char* text =
      "gfx_target_version 90008\n"
      "simd_count 480\n"
      "simd_per_cu 4\n"
      "cpu_cores_count 0\n";
  auto p = decode_properties(text, "old");
  EXPECT_TRUE(p.complete);
  EXPECT_EQ(p.compute_units.value(), 120u);
  EXPECT_EQ(p.gfx_target.value(), "gfx908");
  EXPECT_FALSE(p.num_xcc.has_value());
  EXPECT_TRUE(to_json(p)["num_xcc"].is_null());
}

TEST(Properties, MalformedLineNamesFileAndLine) {
  auto p = decode_properties("simd_count 8\nsimd_per_cu four\nnum_xcc 1\n", "props.txt");
  EXPECT_FALSE(p.complete);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].file, "props.txt");
  EXPECT_EQ(p.diagnostics[0].line, 2u);
  EXPECT_NE(p.diagnostics[0].message.find("<key> <unsigned integer>"), std::string::npos);
  EXPECT_EQ(p.diagnostics[0].to_string().rfind("props.txt:2: ", 0), 0u);
  EXPECT_EQ(p.num_xcc.value(), 1u);  // the rest still decodes
  EXPECT_FALSE(p.compute_units.has_value());
}

TEST(Properties, CutShortWithoutNewlineIsIncomplete) {
  auto p = decode_properties("simd_count 8\nsimd_per_cu 4\nnum_x", "cut");
  EXPECT_FALSE(p.complete);
  ASSERT_FALSE(p.diagnostics.empty());
  EXPECT_EQ(p.diagnostics.back().line, 3u);
}

TEST(Properties, EmptyInputIsIncompleteNotGuessed) {
  auto p = decode_properties("", "empty");
  EXPECT_FALSE(p.complete);
  EXPECT_FALSE(p.gpu);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_NE(p.diagnostics[0].message.find("simd_count"), std::string::npos);
}
