#include <gtest/gtest.h>

#include "discovery/json.h"
#include "discovery/pm4_packets.h"
#include "discovery/rls.h"
#include "fixtures.h"
#include "seq_hex_dump.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;

namespace {

std::string ib_dump(const std::vector<std::uint32_t>& dw) { return gt::seq_hex_dump(dw, "  "); }

// What pm_map_process_aldebaran + pm_map_queues_v9 + pm_runlist_v9 write (values made up).
std::vector<std::uint32_t> runlist() {
  using namespace gpreempt::discovery::pm4;
  std::vector<std::uint32_t> ib;
  std::vector<std::uint32_t> mp(map_process::kDwordsAldebaran, 0);
  mp[0] = make_header(opcode::MAP_PROCESS, mp.size());
  mp[1] = map_process::pasid.set(0, 0x8001);
  mp[1] = map_process::process_quantum.set(mp[1], 10);
  mp[13] = map_process::num_queues.set(0, 2);
  mp[19] = 0xabc000;
  mp[20] = 0x7f;
  ib.insert(ib.end(), mp.begin(), mp.end());
  for (std::uint32_t q = 0; q < 2; ++q) {
    std::vector<std::uint32_t> mq(map_queues::kDwords, 0);
    mq[0] = make_header(opcode::MAP_QUEUES, mq.size());
    mq[1] = map_queues::queue_sel.set(0, map_queues::kQueueSelHwsDetermined);
    mq[1] = map_queues::num_queues.set(mq[1], 1);
    mq[1] = map_queues::engine_sel.set(mq[1], 0);
    mq[2] = map_queues::doorbell_offset.set(0, 0x1008 + q * 2);
    mq[3] = 0x017ba000 + q * 0x10000;
    mq[4] = 0;
    mq[5] = 0xc1576038;
    mq[6] = 0x7f61;
    ib.insert(ib.end(), mq.begin(), mq.end());
  }
  return ib;
}

}  // namespace

TEST(Rls, DecodesMapProcessAndMapQueues) {
  std::string text = "Node 2, gpu_id f7bc:\n" + ib_dump(runlist()) + "Node 3, gpu_id f05b:\n  No active runlist\n";
  auto r = decode_rls(text, "rls");
  ASSERT_TRUE(r.complete) << r.diagnostics.at(0).to_string();
  ASSERT_EQ(r.nodes.size(), 2u);
  const auto& n = r.nodes[0];
  EXPECT_TRUE(n.active_runlist);
  ASSERT_EQ(n.packets.size(), 3u);
  EXPECT_EQ(n.packets[0].opcode_name, "MAP_PROCESS");
  EXPECT_EQ(n.packets[0].dwords, 21u);
  EXPECT_EQ(n.packets[0].field("pasid").value(), 0x8001u);
  EXPECT_EQ(n.packets[0].field("process_quantum").value(), 10u);
  EXPECT_EQ(n.packets[0].field("num_queues").value(), 2u);
  EXPECT_EQ(n.packets[0].field("completion_signal").value(), 0x7f00abc000ull);
  EXPECT_EQ(n.packets[1].opcode_name, "MAP_QUEUES");
  EXPECT_EQ(n.packets[1].dword_offset, 21u);
  EXPECT_EQ(n.packets[1].field("mqd_address").value(), 0x17ba000u);
  EXPECT_EQ(n.packets[1].field("wptr_address").value(), 0x7f61c1576038ull);
  EXPECT_EQ(n.packets[1].field("doorbell_offset").value(), 0x1008u);
  EXPECT_EQ(n.packets[1].field("queue_sel").value(), 1u);
  EXPECT_EQ(n.packets[1].field("engine_sel").value(), 0u);
  EXPECT_EQ(n.packets[2].field("mqd_address").value(), 0x17ca000u);
  EXPECT_FALSE(r.nodes[1].active_runlist);
  EXPECT_TRUE(r.nodes[1].packets.empty());
  auto j = to_json(r);
  EXPECT_EQ(j["nodes"][0]["packets"][1]["opcode"], "MAP_QUEUES");
  EXPECT_EQ(j["nodes"][0]["packets"][1]["mqd_address"], "0x17ba000");
  EXPECT_EQ(j["nodes"][0]["packets"][1]["wptr_address"], "0x7f61c1576038");
  EXPECT_EQ(j["nodes"][0]["packets"][0]["pasid"], 0x8001);
}

TEST(Rls, TruncatedPacketIsIncomplete) {
  auto ib = runlist();
  ib.resize(ib.size() - 3);  // the last MAP_QUEUES loses its wptr address
  auto r = decode_rls("Node 2, gpu_id f7bc:\n" + ib_dump(ib), "cut.rls");
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].file, "cut.rls");
  EXPECT_EQ(r.diagnostics[0].line, 5u);
  EXPECT_NE(r.diagnostics[0].message.find("announces 7 dwords"), std::string::npos);
  ASSERT_EQ(r.nodes[0].packets.size(), 3u);
  EXPECT_FALSE(r.nodes[0].packets[2].complete);
  EXPECT_TRUE(r.nodes[0].packets[1].complete);
}

TEST(Rls, NonType3WordStopsWithDiagnosticAndTrailingZerosArePadding) {
  auto ib = runlist();
  ib.push_back(0);
  ib.push_back(0);
  auto ok = decode_rls("Node 2, gpu_id f7bc:\n" + ib_dump(ib), "pad");
  EXPECT_TRUE(ok.complete);
  EXPECT_EQ(ok.nodes[0].padding_dwords, 2u);
  ib[21] = 0x12345678;  // where the first MAP_QUEUES header should be
  auto bad = decode_rls("Node 2, gpu_id f7bc:\n" + ib_dump(ib), "bad");
  EXPECT_FALSE(bad.complete);
  ASSERT_EQ(bad.diagnostics.size(), 1u);
  EXPECT_NE(bad.diagnostics[0].message.find("type-3 header at IB offset 0x54"), std::string::npos);
  EXPECT_EQ(bad.diagnostics[0].line, 4u);
  EXPECT_EQ(bad.nodes[0].packets.size(), 1u);
}

TEST(Rls, ExampleFileDecodesItsNodes) {
  GPREEMPT_REQUIRE_SHARED();
  // The example's words are "PM4-looking" placeholders (gen_examples.py): the MAP_PROCESS header
  // announces 19 dwords, so the decoder must not invent a MAP_QUEUES at dword 18.
  auto r = decode_rls(gt::read_file(gt::shared_dir() / "kfd/examples/rls.txt"), "rls.txt");
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].gpu_id_hex, "1a2b");
  ASSERT_FALSE(r.nodes[0].packets.empty());
  EXPECT_EQ(r.nodes[0].packets[0].opcode_name, "MAP_PROCESS");
  EXPECT_EQ(r.nodes[0].packets[0].dwords, 19u);
  EXPECT_FALSE(r.nodes[1].active_runlist);
}

TEST(Rls, RowOutsideNodeAndOffsetGap) {
  auto r = decode_rls("  00000000: c0000000\nNode 1, gpu_id 1:\n  00000020: 00000000\n", "gap");
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].line, 1u);
  EXPECT_EQ(r.diagnostics[1].line, 3u);
  EXPECT_NE(r.diagnostics[1].message.find("offset 0x0"), std::string::npos);
}
