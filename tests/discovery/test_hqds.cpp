#include <gtest/gtest.h>

#include "discovery/json.h"
#include "discovery/hqds.h"
#include "fixtures.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;

TEST(Hqds, RealFullCaptureHasEightNodesAndTwentyActiveSlotsOnF7bc) {
  GPREEMPT_REQUIRE_SHARED();
  auto h = decode_hqds(gt::read_file(gt::shared_dir() / "realdata/debugfs/01_mi308x_rocm702_hqds_full.txt"),
                       "01_mi308x_rocm702_hqds_full.txt");
  EXPECT_TRUE(h.complete);
  EXPECT_TRUE(h.diagnostics.empty());
  ASSERT_EQ(h.nodes.size(), 8u);
  EXPECT_EQ(h.nodes[0].node, 2u);
  EXPECT_EQ(h.nodes[0].gpu_id, 0xf7bcu);
  EXPECT_EQ(h.nodes[7].gpu_id_hex, "c3f1");
  std::size_t hiq = 0, cp = 0, sdma = 0, active = 0;
  for (const auto& n : h.nodes)
    for (const auto& s : n.slots) {
      EXPECT_TRUE(s.complete);
      if (s.kind == "HIQ") ++hiq;
      if (s.kind == "CP") ++cp;
      if (s.kind == "SDMA") ++sdma;
      if (s.kind == "CP" && s.active.value_or(false)) {
        ++active;
        EXPECT_EQ(n.gpu_id, 0xf7bcu);
        ASSERT_TRUE(s.decoded.has_value());
        EXPECT_EQ(s.decoded->pipe_priority, 1u);
        EXPECT_EQ(s.decoded->queue_priority, 7u);
        EXPECT_EQ(s.decoded->quantum, 0x111u);
        EXPECT_NE(s.decoded->ring_base, 0u);
      }
    }
  EXPECT_EQ(hiq, 32u);
  EXPECT_EQ(cp, 768u);
  EXPECT_EQ(sdma, 512u);
  EXPECT_EQ(active, 20u);
  // Inst 0, CP Pipe 0, Queue 2: the first CP slot of the file.
  const auto& s = h.nodes[0].slots[1];
  EXPECT_EQ(s.kind, "CP");
  EXPECT_EQ(s.xcc, 0u);
  EXPECT_EQ(s.pipe, 0u);
  EXPECT_EQ(s.queue, 2u);
  EXPECT_EQ(s.registers.front().first, 0xc914u);
  EXPECT_EQ(s.decoded->mqd_base, 0x17ba000u);
  EXPECT_EQ(s.decoded->ring_base, 0x7f41b5200000ull);
  EXPECT_EQ(s.decoded->rptr_report_address, 0x7f61c1576080ull);
  EXPECT_EQ(s.decoded->wptr_poll_address, 0x7f61c1576038ull);
  auto j = to_json(h);
  EXPECT_EQ(j["nodes"][0]["slots"][1]["registers"]["ring_base"], "0x7f41b5200000");
  EXPECT_EQ(j["nodes"][0]["slots"][0]["kind"], "HIQ");
  EXPECT_EQ(j["nodes"][0]["slots"][0]["mec"], 2);
}

TEST(Hqds, RealBaselineHasNoActiveCpSlot) {
  GPREEMPT_REQUIRE_SHARED();
  auto h = decode_hqds(gt::read_file(gt::shared_dir() / "realdata/debugfs/02_mi308x_rocm702_hqds_baseline_node2.txt"),
                       "02");
  EXPECT_TRUE(h.complete);
  ASSERT_EQ(h.nodes.size(), 1u);
  for (const auto& s : h.nodes[0].slots)
    if (s.kind == "CP") {
      EXPECT_FALSE(s.active.value());
    }
}

TEST(Hqds, StoppedDeviceAndOldKernelHeaders) {
  const std::string window_row = " 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";
  std::string text = "Node 1, gpu_id 1a2b:\n Device is stopped\nNode 2, gpu_id 3c4d:\n  HIQ on MEC 2 Pipe 0 Queue 0\n";
  for (int i = 0; i < 7; ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "    %08x:", 0xfea4 + i * 32);
    text += b + window_row;
  }
  text += "  CP Pipe 1, Queue 3\n";
  for (int i = 0; i < 7; ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "    %08x:", 0xfea4 + i * 32);
    text += b + std::string(i == 0 ? " 01234000 00000000 00000001 00000000 00000000 00000002 0000000d 00000111\n"
                                   : window_row);
  }
  text += "  SDMA Engine 0, RLC 1\n    00004e00: 00000000 00000004\n    00004e40: 00000000\n";
  auto h = decode_hqds(text, "old");
  ASSERT_TRUE(h.complete) << h.diagnostics.at(0).to_string();
  ASSERT_EQ(h.nodes.size(), 2u);
  EXPECT_TRUE(h.nodes[0].stopped);
  EXPECT_TRUE(h.nodes[0].slots.empty());
  ASSERT_EQ(h.nodes[1].slots.size(), 3u);
  const auto& cp = h.nodes[1].slots[1];
  EXPECT_EQ(cp.kind, "CP");
  EXPECT_EQ(cp.xcc, 0u);
  EXPECT_EQ(cp.pipe, 1u);
  EXPECT_EQ(cp.queue, 3u);
  EXPECT_TRUE(cp.active.value());
  EXPECT_EQ(cp.decoded->mqd_base, 0x1234000u);
  EXPECT_EQ(cp.decoded->pipe_priority, 2u);
  EXPECT_EQ(cp.decoded->queue_priority, 13u);
  const auto& sd = h.nodes[1].slots[2];
  EXPECT_EQ(sd.kind, "SDMA");
  EXPECT_EQ(sd.pipe, 0u);
  EXPECT_EQ(sd.queue, 1u);
  EXPECT_EQ(sd.registers.size(), 3u);
  EXPECT_FALSE(sd.active.has_value());
  EXPECT_TRUE(to_json(h)["nodes"][0]["stopped"].get<bool>());
}

TEST(Hqds, ExampleFilesDecode) {
  GPREEMPT_REQUIRE_SHARED();
  for (const char* f : {"hqds.txt", "hqds_stopped.txt"}) {
    auto h = decode_hqds(gt::read_file(gt::shared_dir() / "kfd/examples" / f), f);
    EXPECT_TRUE(h.complete) << f << ": " << (h.diagnostics.empty() ? "" : h.diagnostics[0].to_string());
    EXPECT_FALSE(h.nodes.empty());
  }
}

TEST(Hqds, TruncatedSlotIsIncompleteWithLine) {
  GPREEMPT_REQUIRE_SHARED();
  auto text = gt::read_file(gt::shared_dir() / "realdata/debugfs/02_mi308x_rocm702_hqds_baseline_node2.txt");
  std::size_t pos = 0;
  for (int i = 0; i < 12; ++i) pos = text.find('\n', pos) + 1;  // 12 lines: node, HIQ + 7 rows, then 2 of a CP slot's 7 rows
  auto h = decode_hqds(text.substr(0, pos), "cut.txt");
  EXPECT_FALSE(h.complete);
  ASSERT_EQ(h.diagnostics.size(), 1u);
  EXPECT_EQ(h.diagnostics[0].file, "cut.txt");
  EXPECT_EQ(h.diagnostics[0].line, 12u);
  EXPECT_NE(h.diagnostics[0].message.find("expected 56"), std::string::npos);
  EXPECT_FALSE(h.nodes[0].slots.back().complete);
}

TEST(Hqds, UnknownLineIsDiagnosedNotSkipped) {
  auto h = decode_hqds("Node 1, gpu_id 1a2b:\n  Frobnicator 3\n", "x");
  EXPECT_FALSE(h.complete);
  ASSERT_EQ(h.diagnostics.size(), 1u);
  EXPECT_EQ(h.diagnostics[0].line, 2u);
  EXPECT_NE(h.diagnostics[0].message.find("queue slot header"), std::string::npos);
}
