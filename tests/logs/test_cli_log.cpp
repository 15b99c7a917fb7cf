#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

namespace {
std::string write_log(const std::string& tag, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("gpreempt_cli_" + tag + "_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}
}  // namespace

// A file without a single HIP log record is the wrong file (or a run without AMD_LOG_LEVEL): say
// so and what a HIP log is, exit 1 — also with --json, whose document carries the same note.
TEST(CliLog, FileWithoutHipRecordsSaysWhatAHipLogIs) {
  const std::string f = write_log("nolog", "Epoch 1: loss 0.5\nEpoch 2: loss 0.4\n");
  auto r = gt::run_gpreempt("log analyze " + f);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("no HIP runtime log records"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("AMD_LOG_LEVEL=3"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("2 lines"), std::string::npos) << r.out;  // the summary is still printed
  auto j = gt::run_gpreempt("log analyze " + f + " --json");
  EXPECT_EQ(j.exit_code, 1);
  const auto doc = json::parse(j.out);
  ASSERT_EQ(doc["files"][0]["notes"].size(), 1u) << j.out;
  EXPECT_NE(doc["files"][0]["notes"][0].get<std::string>().find("AMD_LOG_LEVEL=3"), std::string::npos);
  // One empty file among good ones still fails the command, after all results are printed.
  const std::string good = write_log("good", ":3:hip_memory.cpp :772 : 1 us: [pid:1 tid:0x1] hipMalloc: Returned hipSuccess : \n");
  auto both = gt::run_gpreempt("log analyze " + good + " " + f + " --json");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(json::parse(both.out)["files"].size(), 2u);
  EXPECT_NE(both.err.find(f), std::string::npos);
  EXPECT_EQ(gt::run_gpreempt("log compare " + good + " " + f).exit_code, 1);
  EXPECT_EQ(gt::run_gpreempt("log analyze " + good).exit_code, 0);
  std::filesystem::remove(f);
  std::filesystem::remove(good);
}

// Dispatch packets are logged from level 4 on: a level-3 log with kernels and no dispatches says
// so; a level-4 log with no dispatches has nothing to explain.
TEST(CliLog, LevelThreeLogSaysDispatchesNeedLevelFour) {
  const std::string l3 = write_log(
      "l3", ":3:hip_module.cpp           :813 : 20161700905 us: [pid:9 tid: 0x7f01] hipLaunchKernel ( 0x1, {1,1,1}, {32,1,1}, 0x2, 0, stream:0x3 )\n"
            ":3:rocvirtual.cpp           :3351: 20161700950 us: [pid:9 tid: 0x7f01] ShaderName : dummy_kernel(int*, int)\n"
            ":3:hip_module.cpp           :813 : 20161701405 us: [pid:9 tid: 0x7f01] hipLaunchKernel: Returned hipSuccess : : duration: 500 us\n");
  auto r = gt::run_gpreempt("log analyze " + l3);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: 0 dispatches: this log's highest level is 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AMD_LOG_LEVEL=4"), std::string::npos) << r.out;
  auto j = json::parse(gt::run_gpreempt("log analyze " + l3 + " --json").out);
  ASSERT_EQ(j["files"][0]["notes"].size(), 1u);
  EXPECT_NE(j["files"][0]["notes"][0].get<std::string>().find("AMD_LOG_LEVEL=4"), std::string::npos);
  const std::string l4 = write_log("l4", ":4:rocdevice.cpp            :2221: 1 us: [pid:9 tid: 0x7f01] Allocate hsa host memory 0x1, size 0x1\n");
  auto r4 = gt::run_gpreempt("log analyze " + l4 + " --json");
  EXPECT_EQ(r4.exit_code, 0);
  EXPECT_EQ(json::parse(r4.out)["files"][0]["notes"].size(), 0u);
  // --pid that matches nothing is an answer, not a wrong file.
  auto other = gt::run_gpreempt("log analyze " + l3 + " --pid 5");
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("no records of pid 5"), std::string::npos) << other.out;
  std::filesystem::remove(l3);
  std::filesystem::remove(l4);
}

// Quoted log text cannot drive the terminal: control bytes are escaped, quotes are bounded.
TEST(CliLog, ErrorTextsAndKernelNamesAreQuotedWithControlBytesEscaped) {
  const std::string f = write_log("ctl", std::string(":1:x.cpp :1 : 1 us: [pid:1 tid:0x1] boom\x01\x07|\0|end", 48) + "\n" +
                                             ":3:x.cpp :1 : 1 us: [pid:1 tid:0x1] ShaderName : k\x08\x08\n" +
                                             ":1:x.cpp :1 : 1 us: [pid:1 tid:0x1] " + std::string(5000, 'y') + "\n");
  auto r = gt::run_gpreempt("log analyze " + f);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("boom\\x01\\x07|\\x00|end"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("k\\x08\\x08"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("... (5036 bytes)"), std::string::npos) << r.out;
  for (char c : r.out) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << static_cast<int>(c);
  EXPECT_LT(r.out.size(), 2000u);
  std::filesystem::remove(f);
}

TEST(CliLog, AnalyzeHelpHasExamples) {
  auto r = gt::run_gpreempt("log analyze --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* example : {"Examples:", "AMD_LOG_LEVEL=4 ./app 2> app.log", "--threads 4", "log analyze -", "--config out/"})
    EXPECT_NE(r.out.find(example), std::string::npos) << example << "\n" << r.out;
}

// A directory, a FIFO or a missing file is refused with the path and the reason (exit 1), the
// errno in the --json failure document — and a FIFO without a writer does not block the command.
TEST(CliLog, InputsThatAreNotRegularFilesAreRefusedWithTheReason) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpreempt_log_input_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto d = gt::run_gpreempt("log analyze " + dir.string() + " --json");
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_NE(d.err.find(dir.string() + ": is a directory"), std::string::npos) << d.err;
  EXPECT_EQ(json::parse(d.out)["error"]["code"], "EISDIR") << d.out;

  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = gt::run_gpreempt("log analyze " + fifo.string());
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_NE(f.err.find("is a FIFO"), std::string::npos) << f.err;

  auto m = gt::run_gpreempt("log analyze " + (dir / "missing.log").string() + " --json");
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(json::parse(m.out)["error"]["errno"], ENOENT) << m.out;
  std::filesystem::remove_all(dir);
}
