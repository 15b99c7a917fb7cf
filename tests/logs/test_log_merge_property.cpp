// Property: a log analyzed in pieces and merged (what `log analyze --threads N` does) gives the
// same JSON, byte for byte, as one pass (--threads 1), for generated logs that mix records with
// and without pids, the same HWq address in several processes, queue-abort dumps (which print no
// pid) before and after the records of their queue, creation lines, and pieces cut at every kind of
// line. Seeded: a failure names its seed, and the same seed gives the same log.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "logs/json.h"
#include "logs/log_file.h"
#include "logs/log_merge.h"
#include "logs/log_record.h"

using namespace gpreempt::logs;
namespace fs = std::filesystem;

namespace {

struct Generator {
  std::mt19937 rng;
  explicit Generator(unsigned seed) : rng(seed) {}
  unsigned pick(unsigned n) { return static_cast<unsigned>(rng() % n); }
  template <class T, std::size_t N>
  const T& one_of(const T (&a)[N]) {
    return a[pick(N)];
  }

  // Few addresses and pids, so that the same HWq shows up in several processes and without a pid.
  std::string hwq() { return one_of({"0x7f0000001000", "0x7f0000002000", "0x7f0000003000"}); }
  std::string prefix(int level) {
    const std::string head = ":" + std::to_string(level) + ":rocvirtual.cpp           :1083: " +
                             std::to_string(1000 + pick(100000)) + " us: ";
    switch (pick(5)) {
      case 0:
        return head + "[pid:11 tid: 0x7f01] ";
      case 1:
        return head + "[pid:22 tid:0x7f02] ";
      case 2:
        return head + "33 : [tid:0x7f03] ";  // ROCm 5
      case 3:
        return head + "44: [7f04]";  // ROCm 4, message right after the bracket
      default:
        return head + (pick(2) ? "[7f05] " : " ");  // no pid
    }
  }
  std::string record() {
    const std::string q = hwq();
    const std::string id = std::to_string(pick(4));
    switch (pick(14)) {
      case 0:
      case 1:
        return prefix(4) + "SWq=0x7f0000009000, HWq=" + q + ", id=" + id +
               ", Dispatch Header = 0xb02 (type=2, barrier=1, acquire=1, release=1), setup=3";
      case 2:
        return prefix(4) + "HWq=" + q + ", Dispatch Header = 0xb02 (type=2), setup=3";  // ROCm 4/5
      case 3:
        return prefix(4) + "SWq=0x7f0000009100, HWq=" + q + ", id=" + id +
               ", BarrierAND Header = 0x1503";
      case 4:
        return prefix(3) + "Created SWq=0x7f000000a" + id + "00 to map on HWq=" + q +
               " with size " + std::to_string(4096 << pick(3)) + " with priority " +
               std::to_string(pick(3)) + ", cooperative: 0";
      case 5:
        return prefix(3) + "created hardware queue " + q +
               " with size 16384 with priority 1, cooperative: 0";
      case 6:
        return prefix(3) + "acquireQueue refCount: " + q + " (1)";
      case 7:
        return prefix(3) + "releaseQueue refCount:" + q + " (0)";
      case 8:
        return prefix(3) + "Selected queue refCount: " + q + " (2)";
      case 9:
        return prefix(4) + "Deleting hardware queue " + q + " with refCount 0";
      case 10:
        return prefix(3) + (pick(2) ? "!\t" : "") + "ShaderName : k" + id;
      case 11:
        return prefix(3) + "ihipModuleLoad: Returned hipErrorInvalidImage : ";
      case 12:
        return prefix(1) + "hipFree: Returned hipErrorInvalidValue : ";
      default:
        return prefix(3) + "hipLaunchKernel: Returned hipSuccess : : duration: 5 us";
    }
  }
  // ROCclr's queue-abort dump: lines without a record prefix, naming an HWq without a pid.
  std::string dump() {
    const std::string q = hwq();
    std::string d = "Kernel Name: k" + std::to_string(pick(3)) + "\n";
    d += "VGPU=0x5d4b20 SWq=0x7f000000b" + std::to_string(pick(3)) + "00, HWq=" + q +
         ", id=" + std::to_string(pick(4)) + "\n";
    d += "\tDispatch Header = 0xb02 (type=2, barrier=1, acquire=1, release=1), setup=3\n";
    if (pick(2))
      d += ":0:rocdevice.cpp            :3594: 4 us: Callback: Queue " + q +
           " aborting with error : HSA_STATUS_ERROR_EXCEPTION\n";
    return d;
  }
  std::string log() {
    std::string text;
    const unsigned lines = 20 + pick(120);
    for (unsigned i = 0; i < lines; ++i) {
      const unsigned k = pick(20);
      if (k == 0)
        text += dump();
      else if (k == 1)
        text += "program output " + std::to_string(i) + "\n";
      else if (k == 2)
        text += "\n";
      else if (k == 3)
        text += record() + " " + record() + "\n";  // two records glued by a paste
      else
        text += record() + "\n";
    }
    return text;
  }
};

// Offsets of lines that start a record: where analyze_file may cut.
std::vector<std::size_t> record_starts(const std::string& text) {
  std::vector<std::size_t> at;
  for (std::size_t i = 1; i < text.size(); ++i)
    if (text[i - 1] == '\n' &&
        gpreempt::logs::detail::is_record_start(std::string_view(text).substr(i)))
      at.push_back(i);
  return at;
}

std::string json_of(const LogSummary& s) {
  return to_json(s).dump();
}

}  // namespace

TEST(LogMergeProperty, PiecesMergeToTheOnePassResultForGeneratedLogs) {
  for (unsigned seed = 1; seed <= 600; ++seed) {
    Generator g(seed);
    const std::string text = g.log();
    AnalyzerOptions o;
    if (seed % 5 == 0) o.max_errors = 2;
    if (seed % 7 == 0) o.pid = 22;
    const std::string expected = json_of(analyze_log(text, o));
    const auto starts = record_starts(text);
    for (int round = 0; round < 6; ++round) {
      std::vector<std::size_t> cuts;
      if (round == 0) {
        cuts = starts;  // a piece per record line: every boundary at once
      } else {
        for (std::size_t at : starts)
          if (g.pick(4) == 0) cuts.push_back(at);
      }
      ASSERT_EQ(json_of(analyze_in_pieces(text, cuts, o)), expected)
          << "seed " << seed << ", round " << round << ", " << cuts.size() << " cuts\n"
          << text;
    }
  }
}

// The same through the file reader, whose pieces start where it finds a record after each
// thread's share of the file (small minimum pieces, so that boundaries fall all over).
TEST(LogMergeProperty, ThreadsGiveTheOneThreadResultForGeneratedFiles) {
  const fs::path path =
      fs::temp_directory_path() / ("gpreempt_log_merge_" + std::to_string(::getpid()) + ".log");
  for (unsigned seed = 1; seed <= 80; ++seed) {
    Generator g(1000 + seed);
    const std::string text = g.log();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    const std::string expected = json_of(analyze_file(path.string(), {}, 1));
    ASSERT_EQ(expected, json_of(analyze_log(text)));
    for (unsigned threads : {2u, 3u, 5u, 8u})
      for (std::uint64_t piece : {1u, 64u, 300u})
        ASSERT_EQ(json_of(analyze_file(path.string(), {}, threads, piece)), expected)
            << "seed " << 1000 + seed << ", " << threads << " threads, pieces >= " << piece << "\n"
            << text;
  }
  fs::remove(path);
}
