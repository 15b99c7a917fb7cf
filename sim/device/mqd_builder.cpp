#include "mqd_builder.h"

#include <discovery/gfx9_mqd_layout.h>
#include <discovery/pm4_packets.h>
#include <gpreempt/kfd_abi.h>

#include <bit>

namespace gpreempt::sim::detail {

namespace gfx9 = gpreempt::discovery::gfx9;
namespace m = gpreempt::discovery::gfx9::mqd;
namespace pm4 = gpreempt::discovery::pm4;
using namespace gpreempt::kfd;

namespace {

uint32_t lo(uint64_t v) {
  return static_cast<uint32_t>(v);
}
uint32_t hi(uint64_t v) {
  return static_cast<uint32_t>(v >> 32);
}
uint32_t log2_floor(uint64_t v) {
  return v ? 63u - static_cast<uint32_t>(std::countl_zero(v)) : 0;
}
// order_base_2(x) - 1 of the driver, for power-of-two sizes; 0 for an empty ring.
uint32_t size_field(uint64_t bytes_div4) {
  return bytes_div4 > 1 ? log2_floor(bytes_div4) - 1 : 0;
}

// Register values the captures show in mapped slots but no driver code writes: the firmware's.
constexpr uint32_t kDoorbellEnAndSchdHit = 0x60000000;  // CP_HQD_PQ_DOORBELL_CONTROL EN|SCHD_HIT
constexpr uint32_t kHqStatus0Mapped = 0x40000000;
constexpr uint32_t kEopRptrMapped = 0x40000000;
constexpr uint32_t kEopWptrMapped = 0x007f8000;

constexpr uint32_t kProcessDoorbellBase = 0x1000;
constexpr uint32_t kProcessDoorbellFrameDwords = 0x800;

// SDMA RLC register runs (offset from RLC0_RB_CNTL in bytes, first MQD dword, count):
// RB_CNTL..DOORBELL, STATUS..CSA_ADDR_HI, IB_SUB_REMAIN..MINOR_PTR_UPDATE, MIDCMD_DATA0..CNTL.
struct SdmaRun {
  uint32_t byte_offset, first_dword, count;
};
constexpr SdmaRun kSdmaRuns[] = {{0x0, 0, 19}, {0xa0, 19, 6}, {0xbc, 25, 7}, {0x100, 32, 12}};

}  // namespace

uint32_t doorbell_dword_offset(const Process& p, const Queue& q) {
  return kProcessDoorbellBase + p.doorbell_slot * kProcessDoorbellFrameDwords + q.doorbell_id * 2;
}

std::array<uint32_t, 512> build_compute_mqd(const DeviceProfile& prof, const Process& p,
                                            const Queue& q, uint32_t xcc) {
  std::array<uint32_t, 512> d{};
  const bool multi_xcc = prof.num_xcc > 1;
  const bool cwsr = q.ctx_save_addr != 0;
  d[m::header] = gfx9::kComputeMqdHeaderInit;
  d[m::compute_pipelinestat_enable] = 1;
  d[m::compute_static_thread_mgmt_se0] = 0xffffffff;
  d[m::compute_static_thread_mgmt_se1] = 0xffffffff;
  d[m::compute_static_thread_mgmt_se2] = 0xffffffff;
  d[m::compute_static_thread_mgmt_se3] = 0xffffffff;
  if (multi_xcc) {
    // GFX 9.4.3 layout of dwords 39..42 as the MI308X capture shows them: the logical XCC id
    // (rotating per queue), two more SE masks and a thread-group chunk size of 1.
    d[39] = (q.logical_xcc_start + xcc) % prof.num_xcc;
    d[40] = 0xffffffff;
    d[41] = 1;
    d[42] = 0xffffffff;
    d[226] = prof.mqd_stride_per_xcc;  // cp_mqd_stride_size
  }
  if (cwsr) d[20] = 0x40;  // compute_pgm_rsrc2.TRAP_PRESENT with a CWSR trap handler
  const uint64_t mqd_addr = q.mqd_gpu_addr + uint64_t{xcc} * prof.mqd_stride_per_xcc;
  d[m::cp_mqd_base_addr_lo] = lo(mqd_addr);
  d[m::cp_mqd_base_addr_hi] = hi(mqd_addr);
  d[m::cp_hqd_active] = q.active() ? 1 : 0;
  d[m::cp_hqd_vmid] = 0;  // HWS assigns the VMID at map time
  // PRELOAD_REQ | PRELOAD_SIZE 0x53, plus QSWITCH_MODE when the queue has a CWSR area.
  d[m::cp_hqd_persistent_state] = 0x5301 | (cwsr ? 0x40000000u : 0u);
  d[m::cp_hqd_pipe_priority] = gfx9::pipe_priority_for(q.priority);
  d[m::cp_hqd_queue_priority] = q.priority;
  d[m::cp_hqd_quantum] = 0x111;  // QUANTUM_EN, SCALE 1, DURATION 1 (realdata 01-03)
  d[m::cp_hqd_pq_base_lo] = gfx9::pq_base_lo_of(q.ring_base);
  d[m::cp_hqd_pq_base_hi] = gfx9::pq_base_hi_of(q.ring_base);
  d[m::cp_hqd_pq_rptr_report_addr_lo] = lo(q.rptr);
  d[m::cp_hqd_pq_rptr_report_addr_hi] = hi(q.rptr);
  d[m::cp_hqd_pq_wptr_poll_addr_lo] = lo(q.wptr);
  d[m::cp_hqd_pq_wptr_poll_addr_hi] = hi(q.wptr);
  d[m::cp_hqd_pq_doorbell_control] = (doorbell_dword_offset(p, q) << 2) | 0x2;
  // RPTR_BLOCK_SIZE 5 and the fixed control bits of the capture, the ring size, and on XCCs
  // other than the first NO_UPDATE_RPTR (only XCC 0 reports the read pointer).
  d[m::cp_hqd_pq_control] =
      0x14014500u | size_field(q.ring_size / 4) | (multi_xcc && xcc ? 0x08000000u : 0u);
  d[149] = 0x00b00000;           // cp_hqd_ib_control: MIN_IB_AVAIL_SIZE 3, IB_EXE_DISABLE
  d[160] = 0x4000;               // cp_hqd_hq_status0
  d[m::cp_mqd_control] = 0x100;  // PRIV_STATE
  if (q.eop_addr) {
    d[m::cp_hqd_eop_base_addr_lo] = lo(q.eop_addr >> 8);
    d[m::cp_hqd_eop_base_addr_hi] = hi(q.eop_addr >> 8);
    d[m::cp_hqd_eop_control] = std::min<uint32_t>(0xA, size_field(q.eop_size / 4));
  }
  if (cwsr) {
    const uint64_t ctx = q.ctx_save_addr + uint64_t{xcc} * q.ctx_save_size;
    d[m::cp_hqd_ctx_save_base_addr_lo] = lo(ctx);
    d[m::cp_hqd_ctx_save_base_addr_hi] = hi(ctx);
    d[m::cp_hqd_cntl_stack_offset] = q.ctl_stack_size;
    d[m::cp_hqd_cntl_stack_size] = q.ctl_stack_size;
    d[m::cp_hqd_wg_state_offset] = q.ctl_stack_size;
    d[m::cp_hqd_ctx_save_size] = q.ctx_save_size;
  }
  if (q.uapi_type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) d[m::cp_hqd_aql_control] = 1;
  return d;
}

std::array<uint32_t, 128> build_sdma_mqd(const DeviceProfile&, const Process& p, const Queue& q) {
  std::array<uint32_t, 128> d{};
  // RB_SIZE (order of dwords) at bit 1, RPTR_WRITEBACK_ENABLE bit 12, WRITEBACK_TIMER 6 at 16.
  d[0] = (log2_floor(q.ring_size / 4) << 1) | (1u << 12) | (6u << 16);
  d[1] = gfx9::pq_base_lo_of(q.ring_base);
  d[2] = gfx9::pq_base_hi_of(q.ring_base);
  d[8] = hi(q.rptr);  // rb_rptr_addr_hi
  d[9] = lo(q.rptr);
  d[22] = doorbell_dword_offset(p, q) << 2;  // doorbell_offset
  d[27] = 0xf;                               // dummy_reg = SDMA_RLC_DUMMY_DEFAULT
  d[28] = hi(q.wptr);                        // rb_wptr_poll_addr_hi
  d[29] = lo(q.wptr);
  d[gfx9::sdma_mqd::sdma_engine_id] = q.sdma_engine;
  d[gfx9::sdma_mqd::sdma_queue_id] = q.sdma_queue;
  return d;
}

std::array<uint32_t, 56> mapped_hqd_registers(const DeviceProfile& prof, const Process& p,
                                              const Queue& q, uint32_t xcc, uint32_t vmid) {
  const auto mqd = build_compute_mqd(prof, p, q, xcc);
  std::array<uint32_t, 56> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = mqd[gfx9::hqd::kFirstMqdDword + i];
  namespace h = gfx9::hqd;
  r[h::active] = 1;
  // The capture shows the VMID in both bytes of CP_HQD_VMID on gfx942 (0x303 for VMID 3).
  r[h::vmid] = prof.num_xcc > 1 ? (vmid | (vmid << 8)) : vmid;
  r[h::doorbell_control] |= kDoorbellEnAndSchdHit;
  r[gfx9::hqd::index(160)] |= kHqStatus0Mapped;
  r[gfx9::hqd::index(168)] = kEopRptrMapped;
  r[gfx9::hqd::index(169)] = kEopWptrMapped;
  return r;
}

std::array<uint32_t, 56> idle_hqd_registers() {
  // A CP slot KFD owns but nothing is mapped to (realdata 02, every idle slot alike).
  std::array<uint32_t, 56> r{};
  r[4] = 0x0be05301;   // persistent_state
  r[17] = 0x00308509;  // pq_control
  r[21] = 0x00300000;  // ib_control
  r[32] = 0x40000000;  // hq_status0
  r[34] = 0x00000100;  // mqd_control
  r[39] = 0x00000006;  // eop_control
  r[40] = 0x40000000;  // eop_rptr
  r[41] = 0x007f8000;  // eop_wptr
  return r;
}

std::array<uint32_t, 56> hiq_registers(uint32_t xcc) {
  // The kernel's own HIQ (MEC 2 pipe 0 queue 0) as realdata 02 shows it on every XCC; its MQD
  // sits 0x800 further per XCC and XCCs other than 0 set NO_UPDATE_RPTR.
  std::array<uint32_t, 56> r{};
  r[0] = 0x006e3000 + xcc * 0x800;
  r[2] = 1;
  r[4] = 0x00005300;
  r[6] = 1;
  r[7] = 0x111;
  r[8] = 0x0000fcc0;
  r[10] = 0x2f;
  r[11] = 0x00fcd800;
  r[13] = 0x00fcda00;
  r[15] = 0xe0003000;
  r[17] = xcc ? 0xd8008508 : 0xd0008508;
  r[18] = 0x00fcde00;
  r[20] = 0x1c;
  r[21] = 0x40b00000;
  r[28] = 0xa1a2a3a4;
  r[32] = 0x4000c440;
  r[34] = 0x100;
  r[37] = 0x0000fcc8;
  r[39] = 9;
  r[40] = 0x40000000;
  r[41] = 0x03ff8000;
  r[54] = 0xa2f;
  return r;
}

std::vector<std::pair<uint32_t, uint32_t>> sdma_rlc_registers(uint32_t base,
                                                              const DeviceProfile& prof,
                                                              const Process* p, const Queue* q,
                                                              uint32_t vmid) {
  std::array<uint32_t, 128> d{};
  if (p && q) {
    d = build_sdma_mqd(prof, *p, *q);
    // Mapped: RB_ENABLE and the VMID set by the firmware, CONTEXT_STATUS as captured.
    d[0] = (d[0] & ~(1u << 12)) | 1u | (vmid << 24);
    d[17] = 4;
  } else {
    // Idle RLC (realdata 02).
    d[0] = 0x00040000;
    d[7] = 0x00403000;
    d[9] = 1;
    d[10] = 0x100;
    d[17] = 4;
    d[27] = 0xf;
    d[30] = 0x4000;  // rb_aql_cntl
  }
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& run : kSdmaRuns)
    for (uint32_t i = 0; i < run.count; ++i)
      out.emplace_back(base + run.byte_offset + i * 4, d[run.first_dword + i]);
  return out;
}

std::vector<uint32_t> build_runlist_ib(const DeviceProfile& prof,
                                       const std::vector<RunlistEntry>& runlist,
                                       uint64_t ib_gpu_addr) {
  namespace mp = pm4::map_process;
  namespace mq = pm4::map_queues;
  std::vector<uint32_t> ib;
  uint32_t compute = 0;
  for (const auto& e : runlist) {
    const Process& p = *e.process;
    std::vector<uint32_t> pkt(mp::kDwordsAldebaran, 0);
    pkt[0] = pm4::make_header(pm4::opcode::MAP_PROCESS, mp::kDwordsAldebaran);
    uint32_t d1 = 0;
    d1 = mp::pasid.set(d1, p.pasid);
    d1 = mp::process_quantum.set(d1, 10);
    pkt[1] = d1;
    // Page directory, apertures and trap handler: per-process values the driver computes from
    // the VM; synthetic but stable (page directory per PASID, CWSR TBA/TMA at the top of the
    // 47-bit space).
    const uint64_t pd = 0x0000008000000000ull + uint64_t{p.pasid - 0x8000} * 0x200000;
    pkt[2] = lo(pd >> 12);
    pkt[3] = hi(pd >> 12);
    pkt[4] = 0x00010002;  // SH_MEM_BASES: shared (LDS) 1 << 48, private (scratch) 2 << 48
    pkt[5] = 0x00000018;  // SH_MEM_CONFIG: unaligned access mode
    const uint64_t tba = 0x00007ffff0000000ull - uint64_t{p.pasid - 0x8000} * 0x10000;
    pkt[6] = lo(tba >> 8);
    pkt[7] = hi(tba >> 8);
    pkt[8] = lo((tba + 0x1000) >> 8);
    pkt[9] = hi((tba + 0x1000) >> 8);
    uint32_t d14 = 0;
    d14 = mp::sdma_enable.set(d14, 1);
    d14 = mp::num_queues.set(d14, e.queue_count);
    pkt[13] = d14;
    ib.insert(ib.end(), pkt.begin(), pkt.end());
    for (const Queue* q : e.queues) {
      std::vector<uint32_t> mqp(mq::kDwords, 0);
      mqp[0] = pm4::make_header(pm4::opcode::MAP_QUEUES, mq::kDwords);
      uint32_t d = 0;
      d = mq::queue_sel.set(d, mq::kQueueSelHwsDetermined);
      d = mq::num_queues.set(d, 1);
      if (q->is_sdma()) {
        if (q->sdma_engine < 2) {
          d = mq::engine_sel.set(d, 2 + q->sdma_engine);  // sdma0 / sdma1
        } else {
          d = mq::extended_engine_sel.set(d, 1);  // sdma0..7
          d = mq::engine_sel.set(d, q->sdma_engine);
        }
      } else {
        ++compute;
      }
      mqp[1] = d;
      mqp[2] = mq::doorbell_offset.set(0, doorbell_dword_offset(p, *q));
      mqp[3] = lo(q->mqd_gpu_addr);
      mqp[4] = hi(q->mqd_gpu_addr);
      mqp[5] = lo(q->wptr);
      mqp[6] = hi(q->wptr);
      ib.insert(ib.end(), mqp.begin(), mqp.end());
    }
  }
  // pm_calc_rlib_size(): more processes than KFD VMIDs or more compute queues than CP slots.
  if (runlist.size() > kVmidsForKfd || compute > prof.num_cp_queues) {
    namespace rl = pm4::run_list;
    std::vector<uint32_t> pkt(rl::kDwords, 0);
    pkt[0] = pm4::make_header(pm4::opcode::RUN_LIST, rl::kDwords);
    pkt[1] = rl::ib_base_lo.set(0, lo(ib_gpu_addr) >> 2);
    pkt[2] = hi(ib_gpu_addr);
    uint32_t d3 = 0;
    d3 = rl::ib_size.set(d3, static_cast<uint32_t>(ib.size() + rl::kDwords));
    d3 = rl::chain.set(d3, 1);
    d3 = rl::valid.set(d3, 1);
    d3 = rl::process_cnt.set(d3, static_cast<uint32_t>(runlist.size()));
    pkt[3] = d3;
    ib.insert(ib.end(), pkt.begin(), pkt.end());
  }
  return ib;
}

}  // namespace gpreempt::sim::detail
