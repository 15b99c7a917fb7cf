// Every capture in ../shared/realdata/amdlog decodes to what its .src.txt describes.
#include <gtest/gtest.h>

#include <filesystem>

#include "fixtures.h"
#include "logs/hip_log_analyzer.h"
#include "logs/json.h"

using namespace gpreempt::logs;
namespace gt = gpreempt::testing;

namespace {
LogSummary load(const char* name) {
  return analyze_log(gt::read_file(gt::shared_dir() / "realdata/amdlog" / name));
}
}  // namespace

TEST(LogRealdata, EveryCaptureIsMostlyRecognized) {
  GPREEMPT_REQUIRE_SHARED();
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(gt::shared_dir() / "realdata/amdlog")) {
    if (e.path().extension() != ".log") continue;
    ++files;
    auto s = analyze_log(gt::read_file(e.path()));
    EXPECT_GT(s.lines, 0u) << e.path();
    // Only the Markdown fence of the README excerpts may stay unrecognized.
    EXPECT_GE(s.recognized + 1, s.records) << e.path();
    EXPECT_FALSE(s.truncated_record);
  }
  EXPECT_EQ(files, 6u);
}

TEST(LogRealdata, StreamPriorityL4FourQueuesWithPriorities) {
  GPREEMPT_REQUIRE_SHARED();
  auto s = load("03_mi308x_rocm702_stream_priority_L4.log");
  EXPECT_EQ(s.lines, 669u);
  EXPECT_EQ(s.recognized, 669u);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid.value(), 459769);
  ASSERT_EQ(s.hw_queues.size(), 4u);
  std::vector<int> prio;
  for (const auto& q : s.hw_queues) {
    prio.push_back(q.priority.value());
    EXPECT_EQ(q.size.value(), 16384u);
    EXPECT_EQ(q.dispatches, 6u);
    EXPECT_EQ(q.barriers, 6u);
    EXPECT_EQ(q.sw_queues.size(), 1u);
    EXPECT_TRUE(q.deleted);
  }
  EXPECT_EQ(prio, (std::vector<int>{2, 0, 2, 1}));
  EXPECT_EQ(s.hw_queues[0].address, 0x7f8acd200000ull);
  EXPECT_EQ(s.dispatches, 24u);
  EXPECT_EQ(s.barriers, 24u);
  EXPECT_EQ(s.kernels.at("dummy_kernel(int*, int)"), 24u);
  EXPECT_TRUE(s.errors.empty());
}

TEST(LogRealdata, SixteenStreamsPooledOnFourHwQueues) {
  GPREEMPT_REQUIRE_SHARED();
  auto s = load("04_mi308x_rocm702_16streams_L3.log");
  EXPECT_EQ(s.recognized, 1290u);
  ASSERT_EQ(s.hw_queues.size(), 4u);
  std::uint64_t acquired = 0;
  for (const auto& q : s.hw_queues) acquired += q.acquired;
  EXPECT_EQ(acquired, 16u);  // 4 acquireQueue + 12 "Selected queue"
  EXPECT_FALSE(s.processes[0].pid.has_value());
  EXPECT_EQ(s.kernels.at("dummy_kernel(int*, int)"), 96u);
}

TEST(LogRealdata, QueueAbortDumpIsAnError) {
  GPREEMPT_REQUIRE_SHARED();
  auto s = load("02_strixhalo_rpc_queue_abort.log");
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].line, 9u);
  EXPECT_NE(s.errors[0].text.find("aborting with error"), std::string::npos);
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].address, 0x7f745c100000ull);
  EXPECT_EQ(s.hw_queues[0].sw_queues.count(0x7f7570e37000ull), 1u);
  EXPECT_EQ(s.dispatches, 0u);  // the dump's "Dispatch Header" is the faulting packet, not a launch
}

TEST(LogRealdata, TerminalWrappedLumiPaste) {
  GPREEMPT_REQUIRE_SHARED();
  auto s = load("12_lumi_mi250x_rocm561_terminal_wrapped.log");
  EXPECT_EQ(s.lines, 7u);
  EXPECT_EQ(s.records, 8u);  // the fence line + 7 records (3 glued on line 2, 2 on line 3)
  EXPECT_EQ(s.recognized, 7u);
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].address, 0x14b30ee00000ull);
  EXPECT_EQ(s.hw_queues[0].dispatches, 1u);
  ASSERT_EQ(s.kernels.size(), 1u);
  const std::string k = s.kernels.begin()->first;
  EXPECT_NE(k.find("ENKUlvE0_clEvENK"), std::string::npos) << k;  // rejoined across the wrap
  EXPECT_EQ(k.find(' '), std::string::npos);
  EXPECT_EQ(s.processes[0].pid.value(), 8088);
}

TEST(LogRealdata, OldCreatedLineAndLevelOneError) {
  GPREEMPT_REQUIRE_SHARED();
  auto h = load("13_p1sin_rx7800xt_rocm612_hostcall.log");
  ASSERT_EQ(h.hw_queues.size(), 1u);
  EXPECT_EQ(h.hw_queues[0].address, 0x7fffed28e000ull);
  EXPECT_EQ(h.hw_queues[0].priority.value(), 1);
  EXPECT_EQ(h.kernels.size(), 2u);
  auto m = load("01_hpctraining_hipstdpar_mi300a.log");
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_EQ(m.errors[0].line, 31u);
  EXPECT_NE(m.errors[0].text.find("Unknown Event Type"), std::string::npos);
}

TEST(LogRealdata, EveryCutOfEveryCapturedLineIsAnalyzedAlikeWholeAndInPieces) {
  // A log cut anywhere (a full disk, a killed process, a paste) must never stop the analysis, and
  // the fast paths (whole text) must agree with the general one (small pieces, through the carry).
  // "Selected queue refCount:" cut right after the colon once aborted the whole run.
  GPREEMPT_REQUIRE_SHARED();
  std::string text;
  for (const auto& e : std::filesystem::directory_iterator(gt::shared_dir() / "realdata/amdlog")) {
    if (e.path().extension() != ".log") continue;
    const std::string log = gt::read_file(e.path());
    for (std::size_t b = 0, nl; b < log.size(); b = nl + 1) {
      nl = log.find('\n', b);
      if (nl == std::string::npos) nl = log.size();
      for (std::size_t cut = b; cut <= nl; ++cut) text.append(log, b, cut - b).push_back('\n');
    }
  }
  LogSummary whole;
  ASSERT_NO_THROW(whole = analyze_log(text));
  LogAnalyzer pieces;
  for (std::size_t i = 0; i < text.size(); i += 61) pieces.feed(std::string_view(text).substr(i, 61));
  EXPECT_EQ(to_json(pieces.finish()), to_json(whole));
  EXPECT_GT(whole.recognized, whole.records / 2);
}
