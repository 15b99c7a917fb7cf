#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace gt = gpreempt::testing;
using nlohmann::json;

namespace {
std::string amdlog(const char* f) { return (gt::shared_dir() / "realdata/amdlog" / f).string(); }
}  // namespace

TEST(CliLog, AnalyzeJsonHasTheIssueFields) {
  GPREEMPT_REQUIRE_SHARED();
  auto r = gt::run_gpreempt("log analyze " + amdlog("03_mi308x_rocm702_stream_priority_L4.log") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_EQ(doc["files"].size(), 1u);
  const json& j = doc["files"][0];
  for (const char* k : {"lines", "recognized", "processes", "hw_queues", "dispatches", "barriers", "kernels", "errors"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["hw_queues"].size(), 4u);
  EXPECT_EQ(j["hw_queues"][0]["hwq"], "0x7f8acd200000");
  EXPECT_EQ(j["hw_queues"][0]["priority"], 2);
  EXPECT_EQ(j["dispatches"], 24);
  EXPECT_EQ(j["kernels"]["dummy_kernel(int*, int)"], 24);
  EXPECT_EQ(j["processes"][0]["pid"], 459769);
}

TEST(CliLog, StdinConfigFilesAndPidFilter) {
  GPREEMPT_REQUIRE_SHARED();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpreempt_cli_cfg_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto r = gt::run_gpreempt("log analyze - --pid 459769 --config " + dir.string() + " --json",
                            amdlog("03_mi308x_rocm702_stream_priority_L4.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto cfg = json::parse(gt::read_file(dir / "queue_config_pid_459769.json"));
  EXPECT_EQ(cfg["pid"], 459769);
  ASSERT_EQ(cfg["queues"].size(), 4u);
  EXPECT_EQ(cfg["queues"][0]["hwq"], "0x7f8acd200000");
  EXPECT_EQ(cfg["queues"][0]["rptr_address"], "0x7f8acd200080");
  EXPECT_EQ(json::parse(r.out)["config_files"].size(), 1u);
  fs::remove_all(dir);
  auto other = gt::run_gpreempt("log analyze " + amdlog("03_mi308x_rocm702_stream_priority_L4.log") + " --pid 1 --json");
  EXPECT_EQ(json::parse(other.out)["files"][0]["hw_queues"].size(), 0u);
}

TEST(CliLog, MultipleFilesCompareAndErrors) {
  GPREEMPT_REQUIRE_SHARED();
  auto two = gt::run_gpreempt("log analyze " + amdlog("01_hpctraining_hipstdpar_mi300a.log") + " " +
                              amdlog("02_strixhalo_rpc_queue_abort.log") + " --json");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  auto j = json::parse(two.out);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["errors"][0]["line"], 31);
  EXPECT_EQ(j["files"][1]["errors"][0]["line"], 9);
  auto c = gt::run_gpreempt("log compare " + amdlog("03_mi308x_rocm702_stream_priority_L4.log") + " " +
                            amdlog("04_mi308x_rocm702_16streams_L3.log") + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  auto cj = json::parse(c.out);
  EXPECT_EQ(cj["hw_queues"]["a"], 4);
  EXPECT_EQ(cj["hw_queues"]["b"], 4);
  EXPECT_EQ(cj["dispatches"]["a"], 24);
  EXPECT_EQ(gt::run_gpreempt("log analyze /nonexistent.log").exit_code, 1);
  EXPECT_EQ(gt::run_gpreempt("log").exit_code, 2);
  EXPECT_EQ(gt::run_gpreempt("log compare onlyone").exit_code, 2);
}

// A kernel name with bytes that are not UTF-8 must not cost the user the whole analysis.
TEST(CliLog, NonUtf8BytesInAKernelNameStillGiveJson) {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("gpreempt_cli_utf8_" + std::to_string(::getpid()) + ".log");
  {
    std::ofstream out(file, std::ios::binary);
    out << ":3:rocvirtual.cpp           :3571: 1234567 us: [pid:42 tid:0x7f] ShaderName : k\xff\xfe_bad\n";
  }
  auto r = gt::run_gpreempt("log analyze " + file.string() + " --json");
  fs::remove(file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out)["files"][0];
  EXPECT_EQ(j["lines"], 1);
  ASSERT_EQ(j["kernels"].size(), 1u) << r.out;
  EXPECT_NE(j["kernels"].begin().key().find("_bad"), std::string::npos);
}
