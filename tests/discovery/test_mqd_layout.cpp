// The GFX9 MQD layout constants against their sources, and the decoded fields against a real
// capture read by hand, so that neither depends on the decoder's own constants (a round trip that
// encodes and decodes with the same table cannot see a wrong index).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "discovery/gfx9_mqd_layout.h"
#include "discovery/hqds.h"
#include "discovery/mqds.h"
#include "fixtures.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;
namespace m = gpreempt::discovery::gfx9::mqd;

namespace {

// Every dword index gfx9_mqd_layout.h names, under the field name of struct v9_mqd.
const std::pair<const char*, std::size_t> kLayout[] = {
    {"header", m::header},
    {"compute_pipelinestat_enable", m::compute_pipelinestat_enable},
    {"compute_vmid", m::compute_vmid},
    {"compute_static_thread_mgmt_se0", m::compute_static_thread_mgmt_se0},
    {"compute_static_thread_mgmt_se1", m::compute_static_thread_mgmt_se1},
    {"compute_static_thread_mgmt_se2", m::compute_static_thread_mgmt_se2},
    {"compute_static_thread_mgmt_se3", m::compute_static_thread_mgmt_se3},
    {"disable_queue", m::disable_queue},
    {"ctx_save_base_addr_lo", m::ctx_save_base_addr_lo},
    {"ctx_save_base_addr_hi", m::ctx_save_base_addr_hi},
    {"cp_mqd_base_addr_lo", m::cp_mqd_base_addr_lo},
    {"cp_mqd_base_addr_hi", m::cp_mqd_base_addr_hi},
    {"cp_hqd_active", m::cp_hqd_active},
    {"cp_hqd_vmid", m::cp_hqd_vmid},
    {"cp_hqd_persistent_state", m::cp_hqd_persistent_state},
    {"cp_hqd_pipe_priority", m::cp_hqd_pipe_priority},
    {"cp_hqd_queue_priority", m::cp_hqd_queue_priority},
    {"cp_hqd_quantum", m::cp_hqd_quantum},
    {"cp_hqd_pq_base_lo", m::cp_hqd_pq_base_lo},
    {"cp_hqd_pq_base_hi", m::cp_hqd_pq_base_hi},
    {"cp_hqd_pq_rptr", m::cp_hqd_pq_rptr},
    {"cp_hqd_pq_rptr_report_addr_lo", m::cp_hqd_pq_rptr_report_addr_lo},
    {"cp_hqd_pq_rptr_report_addr_hi", m::cp_hqd_pq_rptr_report_addr_hi},
    {"cp_hqd_pq_wptr_poll_addr_lo", m::cp_hqd_pq_wptr_poll_addr_lo},
    {"cp_hqd_pq_wptr_poll_addr_hi", m::cp_hqd_pq_wptr_poll_addr_hi},
    {"cp_hqd_pq_doorbell_control", m::cp_hqd_pq_doorbell_control},
    {"cp_hqd_pq_control", m::cp_hqd_pq_control},
    {"cp_hqd_dequeue_request", m::cp_hqd_dequeue_request},
    {"cp_mqd_control", m::cp_mqd_control},
    {"cp_hqd_eop_base_addr_lo", m::cp_hqd_eop_base_addr_lo},
    {"cp_hqd_eop_base_addr_hi", m::cp_hqd_eop_base_addr_hi},
    {"cp_hqd_eop_control", m::cp_hqd_eop_control},
    {"cp_hqd_ctx_save_base_addr_lo", m::cp_hqd_ctx_save_base_addr_lo},
    {"cp_hqd_ctx_save_base_addr_hi", m::cp_hqd_ctx_save_base_addr_hi},
    {"cp_hqd_ctx_save_control", m::cp_hqd_ctx_save_control},
    {"cp_hqd_cntl_stack_offset", m::cp_hqd_cntl_stack_offset},
    {"cp_hqd_cntl_stack_size", m::cp_hqd_cntl_stack_size},
    {"cp_hqd_wg_state_offset", m::cp_hqd_wg_state_offset},
    {"cp_hqd_ctx_save_size", m::cp_hqd_ctx_save_size},
    {"cp_hqd_error", m::cp_hqd_error},
    {"cp_hqd_aql_control", m::cp_hqd_aql_control},
    {"cp_hqd_pq_wptr_lo", m::cp_hqd_pq_wptr_lo},
    {"cp_hqd_pq_wptr_hi", m::cp_hqd_pq_wptr_hi},
};

struct TsvRow {
  std::size_t dword;
  std::string byte_offset;
};

// ../shared/kfd/v9_mqd_dwords.tsv: field, dword_index, byte_offset (header line first).
std::map<std::string, TsvRow> read_tsv() {
  std::ifstream in(gt::shared_dir() / "kfd/v9_mqd_dwords.tsv");
  std::map<std::string, TsvRow> rows;
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "field\tdword_index\tbyte_offset");
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string name, dword, off;
    std::getline(ss, name, '\t');
    std::getline(ss, dword, '\t');
    std::getline(ss, off, '\t');
    rows[name] = {static_cast<std::size_t>(std::stoul(dword)), off};
  }
  return rows;
}

std::string hex3(std::size_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%03zx", v);
  return b;
}

}  // namespace

TEST(MqdLayout, EveryNamedDwordMatchesV9MqdDwordsTsv) {
  GPREEMPT_REQUIRE_SHARED();
  const auto tsv = read_tsv();
  ASSERT_GT(tsv.size(), 200u);
  for (const auto& [name, index] : kLayout) {
    auto it = tsv.find(name);
    ASSERT_NE(it, tsv.end()) << name << " is not a field of v9_mqd_dwords.tsv";
    EXPECT_EQ(index, it->second.dword) << name;
    EXPECT_EQ(hex3(gfx9::byte_offset(index)), it->second.byte_offset) << name;
  }
  // The last row is "sizeof <bytes>" of the whole struct.
  ASSERT_TRUE(tsv.count("sizeof"));
  EXPECT_EQ(gfx9::kComputeMqdBytes, tsv.at("sizeof").dword);
  EXPECT_EQ(gfx9::kComputeMqdDwords * 4, tsv.at("sizeof").dword);
  for (const auto& [name, row] : tsv) {
    if (name != "sizeof") {
      EXPECT_LT(row.dword, gfx9::kComputeMqdDwords) << name;
    }
  }
}

TEST(MqdLayout, HqdWindowIsTheTsvRunFromCpMqdBaseAddrToPqWptrHi) {
  GPREEMPT_REQUIRE_SHARED();
  const auto tsv = read_tsv();
  EXPECT_EQ(gfx9::hqd::kFirstMqdDword, tsv.at("cp_mqd_base_addr_lo").dword);
  EXPECT_EQ(gfx9::hqd::kLastMqdDword, tsv.at("cp_hqd_pq_wptr_hi").dword);
  // Every named field of the window sits at its place in the register order.
  for (const auto& [name, row] : tsv) {
    if (row.dword >= gfx9::hqd::kFirstMqdDword && row.dword <= gfx9::hqd::kLastMqdDword) {
      EXPECT_EQ(gfx9::hqd::index(row.dword), row.dword - 128) << name;
    }
  }
}

TEST(MqdLayout, WindowIndexMatchesTheGc943RegisterOffsets) {
  // gc_9_4_3 register offsets (dwords) of the registers decoded: the MQD mirrors them in order,
  // so MQD dword d is register CP_MQD_BASE_ADDR + (d - 128), at byte address 0xc914 + 4 (d - 128).
  const std::pair<std::size_t, std::uint32_t> kRegister[] = {
      {m::cp_mqd_base_addr_lo, 4677},          {m::cp_hqd_active, 4679},
      {m::cp_hqd_vmid, 4680},                  {m::cp_hqd_pipe_priority, 4682},
      {m::cp_hqd_queue_priority, 4683},        {m::cp_hqd_quantum, 4684},
      {m::cp_hqd_pq_base_lo, 4685},            {m::cp_hqd_pq_rptr, 4687},
      {m::cp_hqd_pq_rptr_report_addr_lo, 4688}, {m::cp_hqd_pq_wptr_poll_addr_lo, 4690},
      {m::cp_hqd_pq_doorbell_control, 4692},   {m::cp_hqd_pq_control, 4694},
      {m::cp_hqd_dequeue_request, 4701},       {m::cp_mqd_control, 4711},
      {m::cp_hqd_eop_base_addr_lo, 4714},      {m::cp_hqd_eop_control, 4716},
      {m::cp_hqd_ctx_save_base_addr_lo, 4720}, {m::cp_hqd_cntl_stack_offset, 4723},
      {m::cp_hqd_cntl_stack_size, 4724},       {m::cp_hqd_wg_state_offset, 4725},
      {m::cp_hqd_ctx_save_size, 4726},         {m::cp_hqd_error, 4728},
      {m::cp_hqd_aql_control, 4730},           {m::cp_hqd_pq_wptr_lo, 4731},
      {m::cp_hqd_pq_wptr_hi, 4732},
  };
  for (const auto& [dword, reg] : kRegister) {
    EXPECT_EQ(gfx9::hqd::index(dword), reg - 4677u) << "MQD dword " << dword;
    EXPECT_EQ(gfx9::hqd::register_address(dword), 0xc914u + 4 * (reg - 4677u)) << "MQD dword " << dword;
  }
}

// Values below were read by hand from the hex of the capture (line numbers of the file).
TEST(MqdLayout, RealMqdsCaptureDecodesToTheValuesInItsHex) {
  GPREEMPT_REQUIRE_SHARED();
  auto d = decode_mqds(gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt"), "03");
  ASSERT_TRUE(d.complete);
  ASSERT_EQ(d.processes.size(), 1u);
  const auto& qs = d.processes[0].queues;
  ASSERT_EQ(qs.size(), 5u);

  // Queue 1, XCC 0 (lines 19-25).
  const auto& a = qs[0].xcc_copies.at(0).compute;
  EXPECT_EQ(a.header, 0xc0310800u);                   // line 3, dword 0
  EXPECT_EQ(a.mqd_base, 0x017ba000u);                 // 0x200: 017ba000 00000000
  EXPECT_TRUE(a.active);                              //        00000001
  EXPECT_EQ(a.vmid, 0u);                              //        00000000 (HWS assigns it)
  EXPECT_EQ(a.pipe_priority, 1u);                     //        00000001
  EXPECT_EQ(a.queue_priority, 7u);                    //        00000007
  EXPECT_EQ(a.quantum, 0x111u);                       //        00000111
  EXPECT_EQ(a.ring_base, 0x7f41b5200000u);            // 0x220: 41b52000 0000007f, << 8
  EXPECT_EQ(a.rptr_report_address, 0x7f61c1576080u);  //        c1576080 00007f61
  EXPECT_EQ(a.wptr_poll_address, 0x7f61c1576038u);    //        c1576038 00007f61
  EXPECT_EQ(a.doorbell_control, 0x4022u);             //        00004022
  EXPECT_EQ(a.doorbell_offset, 0x1008u);              //        bits 27:2 of 0x4022
  EXPECT_FALSE(a.doorbell_enabled);                   //        bit 30 clear while unmapped
  EXPECT_EQ(a.pq_control, 0x14014511u);               // 0x240: 00000000 14014511
  EXPECT_EQ(a.ring_size, 1u << 20);                   //        QUEUE_SIZE 0x11: 2^18 dwords
  EXPECT_EQ(a.eop_base, 0u);                          // 0x280: dwords 165/166 both 00000000
  EXPECT_EQ(a.ctx_save_base, 0x7f41a4000000u);        // 0x2a0: a4000000 00007f41
  EXPECT_EQ(a.cntl_stack_offset, 0x2000u);            //        00002000
  EXPECT_EQ(a.cntl_stack_size, 0x2000u);              //        00002000
  EXPECT_EQ(a.wg_state_offset, 0x2000u);              // 0x2c0: 00002000
  EXPECT_EQ(a.ctx_save_size, 0xba6000u);              //        00ba6000

  // Queue 1, XCC 1 (lines 83-89): its own MQD and its own context-save area, one size further.
  const auto& b = qs[0].xcc_copies.at(1).compute;
  EXPECT_EQ(b.mqd_base, 0x017bd000u);
  EXPECT_EQ(b.ctx_save_base, 0x7f41a4ba6000u);  // 0x2a0: a4ba6000 00007f41
  EXPECT_EQ(b.ring_base, 0x7f41b5200000u);

  // Queue 2, XCC 0 (lines 276-277): mapped, so the CP wrote VMID and the doorbell enable back.
  const auto& c = qs[1].xcc_copies.at(0).compute;
  EXPECT_EQ(c.mqd_base, 0x017ae000u);
  EXPECT_EQ(c.vmid, 3u);                  // 00000303: VMID 3 (and IB_VMID 3)
  EXPECT_EQ(c.ring_base, 0x7f41b5a00000u);
  EXPECT_EQ(c.doorbell_offset, 0x1006u);  // 6000401a
  EXPECT_TRUE(c.doorbell_enabled);
}

TEST(MqdLayout, RealHqdsCaptureDecodesToTheValuesInItsHex) {
  GPREEMPT_REQUIRE_SHARED();
  auto h = decode_hqds(gt::read_file(gt::shared_dir() / "realdata/debugfs/01_mi308x_rocm702_hqds_full.txt"), "01");
  ASSERT_TRUE(h.complete);
  ASSERT_FALSE(h.nodes.empty());
  const auto& slots = h.nodes[0].slots;
  ASSERT_GE(slots.size(), 2u);
  // Lines 2-9: the HIQ, whose EOP buffer KFD allocates.
  ASSERT_EQ(slots[0].kind, "HIQ");
  const auto& hiq = *slots[0].decoded;
  EXPECT_EQ(hiq.mqd_base, 0x006e3000u);  // c914: 006e3000 00000000
  EXPECT_EQ(hiq.ring_base, 0xfcc000u);   // c934: 0000fcc0 00000000, << 8
  EXPECT_EQ(hiq.eop_base, 0xfcc800u);    // c994, index 37/38: 0000fcc8 00000000, << 8
  EXPECT_EQ(hiq.vmid, 0u);
  // Lines 10-17: CP pipe 0 queue 2, the first user queue of the mqds capture, mapped.
  ASSERT_EQ(slots[1].kind, "CP");
  const auto& cp = *slots[1].decoded;
  EXPECT_EQ(cp.mqd_base, 0x017ba000u);
  EXPECT_EQ(cp.vmid, 3u);                  // c920: 00000303
  EXPECT_EQ(cp.doorbell_control, 0x60004022u);
  EXPECT_EQ(cp.doorbell_offset, 0x1008u);  // the same doorbell as its MQD
  EXPECT_TRUE(cp.doorbell_enabled);        // bit 30 set while mapped
  EXPECT_EQ(cp.ctx_save_base, 0x7f41a4000000u);  // c9c0/c9c4: a4000000 00007f41
  EXPECT_EQ(cp.ctx_save_size, 0xba6000u);
  EXPECT_EQ(cp.eop_base, 0u);
}
