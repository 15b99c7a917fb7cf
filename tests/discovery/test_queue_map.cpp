#include <gtest/gtest.h>

#include <set>

#include "discovery/json.h"
#include "discovery/queue_map.h"
#include "fixtures.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;

namespace {
struct Real {
  MqdsDump mqds;
  HqdsDump hqds;
};
Real load_real() {
  return {decode_mqds(gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt"), "03"),
          decode_hqds(gt::read_file(gt::shared_dir() / "realdata/debugfs/01_mi308x_rocm702_hqds_full.txt"), "01")};
}
}  // namespace

TEST(QueueMap, RealCapturePid94314HasFiveQueuesEachActiveOnFourXccs) {
  GPREEMPT_REQUIRE_SHARED();
  Real r = load_real();
  QueueMapInputs in;
  in.mqds = &r.mqds;
  in.hqds = &r.hqds;
  auto map = build_queue_map(in);
  ASSERT_EQ(map.queues.size(), 5u);
  std::set<std::uint32_t> ids;
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> slots_seen;
  for (const auto& q : map.queues) {
    EXPECT_EQ(q.pid.value(), 94314);
    EXPECT_EQ(q.gpu_id, 0xf7bcu);
    EXPECT_EQ(q.type, "compute");
    EXPECT_TRUE(q.queue_id_inferred);
    ids.insert(q.queue_id.value());
    ASSERT_EQ(q.hw_slots.size(), 4u);
    for (std::uint32_t x = 0; x < 4; ++x) {
      EXPECT_EQ(q.hw_slots[x].xcc, x);
      EXPECT_TRUE(q.hw_slots[x].active);
      // Same (pipe, queue) on every XCC (FACTS §18).
      EXPECT_EQ(q.hw_slots[x].pipe, q.hw_slots[0].pipe);
      EXPECT_EQ(q.hw_slots[x].queue, q.hw_slots[0].queue);
      slots_seen.insert({x, q.hw_slots[x].pipe, q.hw_slots[x].queue});
    }
    EXPECT_EQ(q.pipe_priority.value(), 1u);
    EXPECT_EQ(q.queue_priority.value(), 7u);
  }
  EXPECT_EQ(ids, (std::set<std::uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(slots_seen.size(), 20u);  // no slot claimed twice
  auto j = to_json(map);
  EXPECT_EQ(j["queues"][0]["pid"], 94314);
  EXPECT_EQ(j["queues"][0]["gpu_id"], 0xf7bc);
  EXPECT_EQ(j["queues"][0]["hw_slots"].size(), 4u);
  EXPECT_TRUE(j["queues"][0]["queue_id_inferred"].get<bool>());
  EXPECT_TRUE(j["queues"][0].contains("rptr_address"));
  EXPECT_TRUE(j["queues"][0]["hwq"].is_array());
}

TEST(QueueMap, HqdsAloneGiveRowsWithUnknownPid) {
  GPREEMPT_REQUIRE_SHARED();
  Real r = load_real();
  QueueMapInputs in;
  in.hqds = &r.hqds;
  auto map = build_queue_map(in);
  ASSERT_EQ(map.queues.size(), 5u);  // grouped by ring base across the 4 XCCs
  for (const auto& q : map.queues) {
    EXPECT_FALSE(q.pid.has_value());
    EXPECT_EQ(q.hw_slots.size(), 4u);
  }
  ASSERT_FALSE(map.notes.empty());
}

TEST(QueueMap, SnapshotIdsJoinOnRingBaseAndLogHwqOnReadPointer) {
  GPREEMPT_REQUIRE_SHARED();
  Real r = load_real();
  QueueMapInputs in;
  in.mqds = &r.mqds;
  in.hqds = &r.hqds;
  // As GET_QUEUE_SNAPSHOT would report queue 7 (id chosen to differ from the inferred ones).
  KnownQueue k;
  k.pid = 94314;
  k.queue_id = 7;
  k.gpu_id = 0xf7bc;
  k.type = "compute";
  k.ring_base = 0x7f41b5200000ull;
  k.rptr_address = 0x7f61c1576080ull;
  k.source = "snapshot";
  in.known.push_back(k);
  in.log_queues.push_back({0x7f61c1576000ull, 94314});  // HWq = rptr - 0x80
  in.log_queues.push_back({0x7f0000000000ull, 94314});  // no such queue
  auto map = build_queue_map(in);
  const QueueMapRow* row = nullptr;
  for (const auto& q : map.queues)
    if (q.ring_base == 0x7f41b5200000ull) row = &q;
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->queue_id.value(), 7u);
  EXPECT_FALSE(row->queue_id_inferred);
  ASSERT_EQ(row->hwq.size(), 1u);
  EXPECT_EQ(row->hwq[0], 0x7f61c1576000ull);
  EXPECT_EQ(to_json(map)["queues"][4]["hwq"][0], "0x7f61c1576000");
  bool noted = false;
  for (const auto& n : map.notes) noted |= n.find("1 HWq address") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(QueueMap, SysfsIdsPairByCreationOrderAndPidFilter) {
  GPREEMPT_REQUIRE_SHARED();
  Real r = load_real();
  QueueMapInputs in;
  in.mqds = &r.mqds;
  for (std::uint32_t id : {10u, 11u, 12u, 13u, 14u})
    in.known.push_back({94314, id, 0xf7bc, "compute", {}, {}, {}, {}, "sysfs"});
  in.known.push_back({555, 0, 0xf7bc, "compute", {}, {}, {}, {}, "sysfs"});
  auto all = build_queue_map(in);
  EXPECT_EQ(all.queues.size(), 6u);
  in.pid = 94314;
  auto map = build_queue_map(in);
  ASSERT_EQ(map.queues.size(), 5u);
  // Oldest mqds entry (listed last) pairs with the lowest sysfs id.
  EXPECT_EQ(map.queues[0].queue_id.value(), 10u);
  EXPECT_EQ(map.queues[0].ring_base.value(), r.mqds.processes[0].queues[4].xcc_copies[0].compute.ring_base);
  for (const auto& q : map.queues) {
    EXPECT_TRUE(q.queue_id_inferred);  // paired by order, not by an address
    EXPECT_EQ(q.sources.size(), 2u);
  }
}

TEST(QueueMap, RunlistMarksMappedQueues) {
  MqdsDump m;
  MqdsProcess p;
  p.pid = 1;
  MqdsQueue q;
  q.type = "compute";
  q.gpu_id = 0x1a2b;
  MqdCopy c;
  c.compute.mqd_base = 0x5000;
  c.compute.ring_base = 0x100000;
  q.xcc_copies.push_back(c);
  p.queues.push_back(q);
  q.xcc_copies[0].compute.mqd_base = 0x6000;
  p.queues.push_back(q);
  m.processes.push_back(p);
  RlsDump rls;
  RlsNode n;
  n.gpu_id = 0x1a2b;
  Pm4Packet pk;
  pk.opcode = 0xA2;
  pk.fields = {{"doorbell_offset", 0x44, false}, {"mqd_address", 0x6000, true}};
  n.packets.push_back(pk);
  rls.nodes.push_back(n);
  QueueMapInputs in;
  in.mqds = &m;
  in.rls = &rls;
  auto map = build_queue_map(in);
  ASSERT_EQ(map.queues.size(), 2u);
  // queue ids: the second listed (older) is 0
  EXPECT_EQ(map.queues[0].mqd_bases[0], 0x6000u);
  EXPECT_TRUE(map.queues[0].in_runlist.value());
  EXPECT_EQ(map.queues[0].doorbell_offset.value(), 0x44u);
  EXPECT_FALSE(map.queues[1].in_runlist.value());
}
