// A file analyzed in parallel pieces (split at record starts, merged) gives exactly the
// sequential summary: same counts, same first-appearance order, same error line numbers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures.h"
#include "logs/json.h"
#include "logs/log_file.h"

using namespace gpreempt::logs;
namespace gt = gpreempt::testing;
namespace fs = std::filesystem;

namespace {
std::string all_captures() {
  std::string text;
  for (const char* f : {"03_mi308x_rocm702_stream_priority_L4.log", "12_lumi_mi250x_rocm561_terminal_wrapped.log",
                        "02_strixhalo_rpc_queue_abort.log", "04_mi308x_rocm702_16streams_L3.log",
                        "13_p1sin_rx7800xt_rocm612_hostcall.log", "01_hpctraining_hipstdpar_mi300a.log"}) {
    std::string t = gt::read_file(gt::shared_dir() / "realdata/amdlog" / f);
    if (!t.empty() && t.back() != '\n') t += '\n';
    text += t;
  }
  return text;
}
}  // namespace

TEST(LogParallel, PiecesMergeToTheSequentialResult) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string text = all_captures() + all_captures();
  const fs::path path = fs::temp_directory_path() / ("gpreempt_log_parallel_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path, std::ios::binary) << text;
  AnalyzerOptions o;
  const auto expected = to_json(analyze_log(text, o));
  EXPECT_EQ(to_json(analyze_file(path.string(), o, 1)), expected);
  for (unsigned threads : {2u, 3u, 7u}) {
    for (std::uint64_t piece : {4096u, 50000u}) {
      auto got = to_json(analyze_file(path.string(), o, threads, piece));
      EXPECT_EQ(got, expected) << threads << " threads, pieces >= " << piece;
    }
  }
  o.max_errors = 1;
  o.pid = 459769;
  EXPECT_EQ(to_json(analyze_file(path.string(), o, 4, 4096)), to_json(analyze_log(text, o)));
  fs::remove(path);
}

TEST(LogParallel, UnreadableFileNamesIt) {
  try {
    analyze_file("/nonexistent/x.log");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.log"), std::string::npos);
  }
}
