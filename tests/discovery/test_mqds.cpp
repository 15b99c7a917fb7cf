#include <gtest/gtest.h>

#include <string>

#include "discovery/gfx9_mqd_layout.h"
#include "discovery/json.h"
#include "discovery/mqds.h"
#include "fixtures.h"
#include "seq_hex_dump.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;

namespace {

std::string hex_dump(const std::vector<std::uint32_t>& dw) { return gt::seq_hex_dump(dw, "    "); }

std::vector<std::uint32_t> compute_mqd(std::uint64_t mqd_base, std::uint64_t ring, std::uint64_t rptr) {
  namespace m = gpreempt::discovery::gfx9::mqd;
  std::vector<std::uint32_t> d(gfx9::kComputeMqdDwords, 0);
  d[m::header] = gfx9::kComputeMqdHeaderInit;
  d[m::cp_mqd_base_addr_lo] = static_cast<std::uint32_t>(mqd_base);
  d[m::cp_mqd_base_addr_hi] = static_cast<std::uint32_t>(mqd_base >> 32);
  d[m::cp_hqd_active] = 1;
  d[m::cp_hqd_pipe_priority] = 2;
  d[m::cp_hqd_queue_priority] = 13;
  d[m::cp_hqd_quantum] = 0x111;
  d[m::cp_hqd_pq_base_lo] = gfx9::pq_base_lo_of(ring);
  d[m::cp_hqd_pq_base_hi] = gfx9::pq_base_hi_of(ring);
  d[m::cp_hqd_pq_rptr_report_addr_lo] = static_cast<std::uint32_t>(rptr);
  d[m::cp_hqd_pq_rptr_report_addr_hi] = static_cast<std::uint32_t>(rptr >> 32);
  d[m::cp_hqd_pq_wptr_poll_addr_lo] = static_cast<std::uint32_t>(rptr - 0x48);
  d[m::cp_hqd_pq_wptr_poll_addr_hi] = static_cast<std::uint32_t>(rptr >> 32);
  d[m::cp_hqd_pq_doorbell_control] = (1u << 30) | (0x1008u << 2);
  d[m::cp_hqd_pq_control] = 0x11;  // QUEUE_SIZE 17: 2^18 dwords = 1 MiB
  d[m::cp_hqd_ctx_save_base_addr_lo] = 0xa4000000;
  d[m::cp_hqd_ctx_save_base_addr_hi] = 0x7f41;
  d[m::cp_hqd_ctx_save_size] = 0x2000;
  return d;
}

}  // namespace

TEST(Mqds, SyntheticTwoXccQueueAndSdmaQueueDecodeExactly) {
  std::string text = "Process 4242 PASID 0x8001:\n  Compute queue on device 1a2b\n";
  text += hex_dump(compute_mqd(0x17ba000, 0x7f41b5200000, 0x7f61c1576080));
  text += hex_dump(compute_mqd(0x17bd000, 0x7f41b5200000, 0x7f61c1576080));
  std::vector<std::uint32_t> sdma(gfx9::kSdmaMqdDwords, 0);
  sdma[1] = 0x12345600 >> 8;
  sdma[9] = 0xdead0080;
  sdma[126] = 1;
  sdma[127] = 3;
  text += "  SDMA queue on device 1a2b\n" + hex_dump(sdma);

  auto m = decode_mqds(text, "synthetic");
  ASSERT_TRUE(m.complete) << (m.diagnostics.empty() ? "" : m.diagnostics[0].to_string());
  ASSERT_EQ(m.processes.size(), 1u);
  EXPECT_EQ(m.processes[0].pid, 4242);
  EXPECT_EQ(m.processes[0].pasid, 0x8001u);
  EXPECT_TRUE(m.processes[0].pasid_printed_hex);
  ASSERT_EQ(m.processes[0].queues.size(), 2u);
  const auto& q = m.processes[0].queues[0];
  EXPECT_EQ(q.type, "compute");
  EXPECT_EQ(q.gpu_id, 0x1a2bu);
  ASSERT_EQ(q.xcc_copies.size(), 2u);
  const auto& c1 = q.xcc_copies[1].compute;
  EXPECT_EQ(q.xcc_copies[1].xcc, 1u);
  EXPECT_EQ(c1.mqd_base, 0x17bd000u);
  EXPECT_TRUE(c1.active);
  EXPECT_EQ(c1.pipe_priority, 2u);
  EXPECT_EQ(c1.queue_priority, 13u);
  EXPECT_EQ(c1.quantum, 0x111u);
  EXPECT_EQ(c1.ring_base, 0x7f41b5200000ull);
  EXPECT_EQ(c1.ring_size, 1u << 20);
  EXPECT_EQ(c1.rptr_report_address, 0x7f61c1576080ull);
  EXPECT_EQ(c1.wptr_poll_address, 0x7f61c1576038ull);
  EXPECT_EQ(c1.doorbell_offset, 0x1008u);
  EXPECT_TRUE(c1.doorbell_enabled);
  EXPECT_EQ(c1.ctx_save_base, 0x7f41a4000000ull);
  EXPECT_EQ(c1.ctx_save_size, 0x2000u);
  EXPECT_EQ(c1.header.value(), gfx9::kComputeMqdHeaderInit);
  const auto& s = m.processes[0].queues[1];
  EXPECT_EQ(s.type, "sdma");
  ASSERT_EQ(s.xcc_copies.size(), 1u);
  ASSERT_TRUE(s.xcc_copies[0].sdma.has_value());
  EXPECT_EQ(s.xcc_copies[0].sdma->ring_base, 0x12345600u);
  EXPECT_EQ(s.xcc_copies[0].sdma->engine_id, 1u);
  EXPECT_EQ(s.xcc_copies[0].sdma->queue_id, 3u);

  auto j = to_json(m);
  EXPECT_EQ(j["processes"][0]["queues"][0]["gpu_id"], 0x1a2b);
  EXPECT_EQ(j["processes"][0]["queues"][0]["xcc_copies"][1]["ring_base"], "0x7f41b5200000");
  EXPECT_EQ(j["processes"][0]["queues"][0]["xcc_copies"][1]["mqd_base"], "0x17bd000");
  EXPECT_EQ(j["processes"][0]["queues"][1]["type"], "sdma");
}

TEST(Mqds, AllHeaderVariantsAndQueueKinds) {
  const std::string row0 = "    00000000: 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";
  std::string text = "Process 10 PASID 32769:\n  DIQ on device 1a2b\n";
  for (int i = 0; i < 64; ++i) {
    char b[16];
    std::snprintf(b, sizeof b, "    %.8x:", i * 32);
    text += b + row0.substr(13);
  }
  text += "Process 11 PASID 0x8002:\n  Bad user queue type 7 on device 1a2b\n";
  text += "Process 12 PASID 12:\n  Queue node with bad user queue type 9 on device 3c4d\n";
  auto m = decode_mqds(text, "variants");
  ASSERT_EQ(m.processes.size(), 3u);
  EXPECT_EQ(m.processes[0].pasid, 32769u);
  EXPECT_FALSE(m.processes[0].pasid_printed_hex);
  EXPECT_EQ(m.processes[0].queues[0].type, "diq");
  EXPECT_TRUE(m.processes[0].queues[0].complete);
  EXPECT_EQ(m.processes[1].pasid, 0x8002u);
  EXPECT_EQ(m.processes[1].queues[0].type, "unknown");
  EXPECT_EQ(m.processes[1].queues[0].raw_type.value(), 7);
  EXPECT_EQ(m.processes[2].queues[0].raw_type.value(), 9);
  EXPECT_EQ(m.processes[2].queues[0].gpu_id, 0x3c4du);
  // The bad-type queues print no MQD: that is reported, not guessed.
  EXPECT_FALSE(m.processes[1].queues[0].complete);
  EXPECT_FALSE(m.complete);
}

TEST(Mqds, RealMi308xCaptureHasFiveQueuesWithFourXccCopies) {
  GPREEMPT_REQUIRE_SHARED();
  auto text = gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  auto m = decode_mqds(text, "03_mi308x_rocm702_mqds.txt");
  EXPECT_TRUE(m.complete);
  EXPECT_TRUE(m.diagnostics.empty());
  ASSERT_EQ(m.processes.size(), 1u);
  EXPECT_EQ(m.processes[0].pid, 94314);
  EXPECT_EQ(m.processes[0].pasid, 94314u);
  ASSERT_EQ(m.processes[0].queues.size(), 5u);
  for (const auto& q : m.processes[0].queues) {
    EXPECT_EQ(q.type, "compute");
    EXPECT_EQ(q.gpu_id_hex, "f7bc");
    EXPECT_TRUE(q.complete);
    ASSERT_EQ(q.xcc_copies.size(), 4u);
    for (std::size_t x = 0; x < 4; ++x) {
      const auto& c = q.xcc_copies[x];
      EXPECT_TRUE(c.complete);
      EXPECT_EQ(c.bytes, 2048u);
      EXPECT_EQ(c.compute.header.value(), 0xc0310800u);
      // PQ_BASE identical on the four copies; copies 12 KiB apart (FACTS §18).
      EXPECT_EQ(c.compute.ring_base, q.xcc_copies[0].compute.ring_base);
      EXPECT_EQ(c.compute.mqd_base, q.xcc_copies[0].compute.mqd_base + x * 0x3000);
      EXPECT_EQ(c.compute.pipe_priority, 1u);
      EXPECT_EQ(c.compute.queue_priority, 7u);
      EXPECT_EQ(c.compute.quantum, 0x111u);
    }
  }
}

TEST(Mqds, TruncatedCaptureIsIncompleteWithFileAndLine) {
  GPREEMPT_REQUIRE_SHARED();
  auto text = gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  // Cut in the middle of line 1000 (inside the 4th queue's dumps).
  std::size_t pos = 0;
  for (int i = 0; i < 999; ++i) pos = text.find('\n', pos) + 1;
  const std::string cut = text.substr(0, pos + 30);
  auto m = decode_mqds(cut, "cut.txt");
  EXPECT_FALSE(m.complete);
  ASSERT_FALSE(m.diagnostics.empty());
  for (const auto& d : m.diagnostics) EXPECT_EQ(d.file, "cut.txt");
  EXPECT_EQ(m.diagnostics.front().line, 1000u);
  const auto& queues = m.processes.at(0).queues;
  ASSERT_EQ(queues.size(), 4u);
  EXPECT_TRUE(queues[0].complete);
  EXPECT_TRUE(queues[2].complete);
  EXPECT_FALSE(queues[3].complete);
  EXPECT_FALSE(queues[3].xcc_copies.back().complete);
  EXPECT_FALSE(to_json(m)["processes"][0]["queues"][3]["complete"].get<bool>());
}

TEST(Mqds, CutAtALineBoundaryStillReportsTheShortCopy) {
  GPREEMPT_REQUIRE_SHARED();
  auto text = gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  std::size_t pos = 0;
  for (int i = 0; i < 100; ++i) pos = text.find('\n', pos) + 1;
  auto m = decode_mqds(text.substr(0, pos), "cut100.txt");
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.diagnostics.size(), 1u);
  EXPECT_EQ(m.diagnostics[0].line, 100u);
  EXPECT_NE(m.diagnostics[0].message.find("expected 2048"), std::string::npos);
}

TEST(Mqds, MalformedRowAndMissingRowsAreDiagnosed) {
  std::string text = "Process 1 PASID 1:\n  Compute queue on device 1a2b\n";
  text += "    00000000: c0310800 00000000 zzzzzzzz 00000000 00000000 00000000 00000000 00000000\n";
  text += "    00000040: 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";
  text += "garbage line\n";
  auto m = decode_mqds(text, "bad.txt");
  EXPECT_FALSE(m.complete);
  ASSERT_GE(m.diagnostics.size(), 3u);
  EXPECT_EQ(m.diagnostics[0].line, 3u);
  EXPECT_NE(m.diagnostics[0].message.find("8 hex words"), std::string::npos);
  EXPECT_EQ(m.diagnostics[1].line, 4u);
  EXPECT_NE(m.diagnostics[1].message.find("offset 0x20"), std::string::npos);
  EXPECT_EQ(m.diagnostics[2].line, 5u);
  EXPECT_FALSE(m.processes[0].queues[0].complete);
}

TEST(Mqds, ExampleFilesDecode) {
  GPREEMPT_REQUIRE_SHARED();
  for (const char* f : {"mqds.txt", "mqds_older_header.txt"}) {
    auto m = decode_mqds(gt::read_file(gt::shared_dir() / "kfd/examples" / f), f);
    EXPECT_TRUE(m.complete) << f << ": " << (m.diagnostics.empty() ? "" : m.diagnostics[0].to_string());
    EXPECT_FALSE(m.processes.empty()) << f;
  }
}
