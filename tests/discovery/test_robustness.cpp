// "Never a crash, never a silent guess": every prefix of every real capture, and captures with
// bytes flipped, decode without crashing; a capture cut inside a dump is never reported complete.
#include <gtest/gtest.h>

#include <random>

#include "discovery/hqds.h"
#include "discovery/mqds.h"
#include "discovery/properties.h"
#include "discovery/rls.h"
#include "fixtures.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;

namespace {
std::string capture(const char* name) { return gt::read_file(gt::shared_dir() / "realdata/debugfs" / name); }
}  // namespace

TEST(DecoderRobustness, EveryCutOfTheMqdsCaptureIsIncompleteUnlessAtAQueueEnd) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string text = capture("03_mi308x_rocm702_mqds.txt");
  // Cut every 97 bytes (co-prime with the 81-byte rows, so cuts land everywhere in a row).
  for (std::size_t cut = 1; cut < text.size(); cut += 97) {
    auto m = decode_mqds(text.substr(0, cut), "cut");
    // Only a cut at the end of a queue's last MQD copy leaves a well-formed (shorter) file.
    const bool at_queue_end = text[cut - 1] == '\n' &&
                              (cut == text.size() || text.compare(cut, 8, "  Comput") == 0);
    EXPECT_EQ(m.complete, at_queue_end) << "cut at byte " << cut;
    EXPECT_EQ(m.diagnostics.empty(), at_queue_end) << "cut at byte " << cut;
    for (const auto& d : m.diagnostics) EXPECT_GE(d.line, 1u);
  }
  EXPECT_TRUE(decode_mqds(text, "whole").complete);
}

TEST(DecoderRobustness, CutBetweenTwoXccCopiesIsCaughtBySiblingQueues) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string text = gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  // Line 1 process, line 2 queue, 256 rows per queue: cut the third queue after its 2nd copy.
  std::size_t pos = 0;
  const int keep = 1 + 2 * 257 + 1 + 2 * 64;
  for (int i = 0; i < keep; ++i) pos = text.find('\n', pos) + 1;
  auto m = decode_mqds(text.substr(0, pos), "cut");
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.processes[0].queues.size(), 3u);
  EXPECT_EQ(m.processes[0].queues[2].xcc_copies.size(), 2u);
  EXPECT_FALSE(m.processes[0].queues[2].complete);
  EXPECT_TRUE(m.processes[0].queues[1].complete);
  ASSERT_EQ(m.diagnostics.size(), 1u);
  EXPECT_EQ(m.diagnostics[0].line, 516u);
  EXPECT_NE(m.diagnostics[0].message.find("has 2 MQD copies"), std::string::npos);
}

TEST(DecoderRobustness, CutsOfTheHqdsCaptureInsideASlotAreIncomplete) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string text = capture("02_mi308x_rocm702_hqds_baseline_node2.txt");
  std::size_t incomplete = 0, total = 0;
  for (std::size_t cut = 1; cut < text.size(); cut += 211) {
    auto h = decode_hqds(text.substr(0, cut), "cut");
    ++total;
    if (!h.complete) ++incomplete;
    // The format has no terminator: a cut is "complete" only when it fell at the end of a line
    // that closes a slot (a full 56-register CP/HIQ window, or any SDMA row: no fixed size).
    if (h.complete) {
      ASSERT_FALSE(h.nodes.empty());
      EXPECT_EQ(text[cut - 1], '\n') << "cut at byte " << cut;
      const auto& last = h.nodes.back().slots.back();
      EXPECT_TRUE(last.kind == "SDMA" || last.registers.size() == 56) << "cut at byte " << cut;
    }
  }
  EXPECT_GT(incomplete, total / 2);
}

TEST(DecoderRobustness, FlippedBytesNeverCrash) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string mqds = capture("03_mi308x_rocm702_mqds.txt");
  const std::string hqds = capture("02_mi308x_rocm702_hqds_baseline_node2.txt");
  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789abcdef: \nxZ,-";
  for (int round = 0; round < 200; ++round) {
    std::string a = mqds, b = hqds;
    for (int k = 0; k < 5; ++k) {
      a[rng() % a.size()] = alphabet[rng() % alphabet.size()];
      b[rng() % b.size()] = alphabet[rng() % alphabet.size()];
    }
    auto m = decode_mqds(a, "fuzz");
    auto h = decode_hqds(b, "fuzz");
    auto r = decode_rls(b, "fuzz");
    auto p = decode_properties(a.substr(0, 4000), "fuzz");
    for (const auto* ds : {&m.diagnostics, &h.diagnostics, &r.diagnostics, &p.diagnostics})
      for (const auto& d : *ds) EXPECT_EQ(d.file, "fuzz");
  }
}
