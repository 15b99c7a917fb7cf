// Spec errors name the JSON path of the bad field, so a harness knows which key to fix.
#include <gtest/gtest.h>

#include <fstream>

#include "eval/des/policy.h"
#include "eval/des/program.h"
#include "eval/des/spec.h"
#include "points.h"

namespace gpreempt::eval::des {
namespace {

std::string error_path(nlohmann::ordered_json doc) {
  try {
    (void)parse_spec(doc);
  } catch (const SpecError& e) {
    return e.path();
  }
  return "(accepted)";
}

TEST(DesSpec, TheSmallPointIsValid) {
  const Spec s = testing::small_spec("gpreempt-hint");
  EXPECT_EQ(s.baseline, "gpreempt-hint");
  ASSERT_EQ(s.online.size(), 1u);
  EXPECT_EQ(s.online[0].requests.value_or(0), 200u);
  EXPECT_EQ(s.offline[0].program.kernels.size(), 2u);
}

TEST(DesSpec, ErrorsNameTheFieldsJsonPath) {
  auto doc = testing::small_point("none");
  auto d = doc;
  d["online"][0]["arrival"]["rate_hz"] = -1;
  EXPECT_EQ(error_path(d), "online[0].arrival.rate_hz");
  d = doc;
  d["online"][0]["arrival"]["kind"] = "gaussian";
  EXPECT_EQ(error_path(d), "online[0].arrival.kind");
  d = doc;
  d["offline"][0]["kernels"][1]["duration_us"] = "long";
  EXPECT_EQ(error_path(d), "offline[0].kernels[1].duration_us");
  d = doc;
  d["offline"][0]["kernels"][0]["cu"] = 3;  // misspelt: unknown fields are errors
  EXPECT_EQ(error_path(d), "offline[0].kernels[0].cu");
  d = doc;
  d["baseline"] = "xsched";
  EXPECT_EQ(error_path(d), "baseline");
  d = doc;
  d["online"][0]["gpu"] = 3;
  EXPECT_EQ(error_path(d), "online[0].gpu");
  d = doc;
  d["policy"] = {{"grace_us", "0"}};
  EXPECT_EQ(error_path(d), "policy.grace_us");
  d = doc;
  d["model"] = {{"faults", "explode@1"}};
  EXPECT_EQ(error_path(d), "model.faults");
  d = doc;
  d["model"] = {{"faults", "timeout@1"}};
  EXPECT_EQ(error_path(d), "(accepted)");
  d["baseline"] = "oracle";
  EXPECT_EQ(error_path(d), "model.faults") << "the oracle's switches cannot fail";
  d = doc;
  d["gpus"] = 9;
  EXPECT_EQ(error_path(d), "gpus");
  d = doc;
  d["online"][0].erase("kernels");
  EXPECT_EQ(error_path(d), "online[0]");
  d = doc;
  d["online"][0]["trace"] = "/nonexistent/trace.jsonl";
  d["online"][0].erase("kernels");
  EXPECT_EQ(error_path(d), "(accepted)");  // files are read when the run starts
}

TEST(DesSpec, KernelKindAndCostBandAreCheckedAndAKernelTooBigForACuIsNamed) {
  auto doc = testing::small_point("none");
  auto d = doc;
  d["offline"][0]["kernels"][0]["kind"] = "tensor";
  EXPECT_EQ(error_path(d), "offline[0].kernels[0].kind");
  d = doc;
  d["model"] = {{"cost_band", "middle"}};
  EXPECT_EQ(error_path(d), "model.cost_band");
  d = doc;
  d["model"] = {{"cost_band", "high"}};
  EXPECT_EQ(parse_spec(d).model.cost_band, sim::gpu::CostBand::kHigh);
  // A matrix kernel (256 registers per lane) on a CU whose VGPR file has only 128: no workgroup
  // of it fits, and the error names it.
  d = doc;
  d["offline"][0]["kernels"][0]["kind"] = "matrix";
  const Spec s = parse_spec(d);
  auto p = *sim::gpu::profile_by_name(s.profile);
  p.vgprs_per_simd_lane = 128;
  const auto& k = s.offline[0].program.kernels[0];
  try {
    (void)kernel_from_def(k, p);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'" + k.name + "'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpreempt::eval::des

namespace gpreempt::eval::des {
namespace {

// A baseline added to the registry (eval/des/policy_registry.cpp) is a value results may carry:
// the result schema's enum lists exactly the registry's names.
TEST(DesSpec, TheResultSchemaListsEveryRegisteredBaseline) {
  std::ifstream in(std::string(GPREEMPT_TEST_SOURCE_DIR) + "/schemas/des-result.schema.json");
  ASSERT_TRUE(in) << "schemas/des-result.schema.json";
  const auto schema = nlohmann::json::parse(in);
  const auto listed =
      schema["properties"]["row"]["properties"]["baseline"]["enum"].get<std::vector<std::string>>();
  EXPECT_EQ(listed, baseline_names());
}

}  // namespace
}  // namespace gpreempt::eval::des
