// GFX9 memory queue descriptor (struct v9_mqd) layout: the dword indices of the fields gpreempt
// reads or writes, shared by the debugfs decoders (lib/discovery) and the simulated device that
// renders the same files (sim/device), so both sides agree by construction.
//
// Source: the kernel's struct v9_mqd (include/v9_structs.h; every reserved_N sits at dword N),
// docs/kfd-interface.md#gfx9-mqd and docs/kfd-interface.md#joining-queues-across-sources. Byte
// offset = 4 × dword index.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpreempt::discovery::gfx9 {

inline constexpr std::size_t kComputeMqdBytes = 2048;  // sizeof(struct v9_mqd)
inline constexpr std::size_t kComputeMqdDwords = kComputeMqdBytes / 4;
inline constexpr std::size_t kSdmaMqdBytes = 512;      // sizeof(struct v9_sdma_mqd)
inline constexpr std::size_t kSdmaMqdDwords = kSdmaMqdBytes / 4;

// The value mqd_init writes into dword 0 (a PM4 type-3 header); a fresh compute MQD starts with it.
inline constexpr std::uint32_t kComputeMqdHeaderInit = 0xC0310800u;

// Compute MQD dword indices (struct v9_mqd).
namespace mqd {
inline constexpr std::size_t header = 0;
inline constexpr std::size_t compute_pipelinestat_enable = 11;
inline constexpr std::size_t compute_vmid = 21;
inline constexpr std::size_t compute_static_thread_mgmt_se0 = 23;
inline constexpr std::size_t compute_static_thread_mgmt_se1 = 24;
inline constexpr std::size_t compute_static_thread_mgmt_se2 = 26;
inline constexpr std::size_t compute_static_thread_mgmt_se3 = 27;
inline constexpr std::size_t disable_queue = 106;
inline constexpr std::size_t ctx_save_base_addr_lo = 124;
inline constexpr std::size_t ctx_save_base_addr_hi = 125;
inline constexpr std::size_t cp_mqd_base_addr_lo = 128;
inline constexpr std::size_t cp_mqd_base_addr_hi = 129;
inline constexpr std::size_t cp_hqd_active = 130;
inline constexpr std::size_t cp_hqd_vmid = 131;
inline constexpr std::size_t cp_hqd_persistent_state = 132;
inline constexpr std::size_t cp_hqd_pipe_priority = 133;
inline constexpr std::size_t cp_hqd_queue_priority = 134;
inline constexpr std::size_t cp_hqd_quantum = 135;
inline constexpr std::size_t cp_hqd_pq_base_lo = 136;  // ring base >> 8, low 32 bits
inline constexpr std::size_t cp_hqd_pq_base_hi = 137;
inline constexpr std::size_t cp_hqd_pq_rptr = 138;
inline constexpr std::size_t cp_hqd_pq_rptr_report_addr_lo = 139;
inline constexpr std::size_t cp_hqd_pq_rptr_report_addr_hi = 140;
inline constexpr std::size_t cp_hqd_pq_wptr_poll_addr_lo = 141;
inline constexpr std::size_t cp_hqd_pq_wptr_poll_addr_hi = 142;
inline constexpr std::size_t cp_hqd_pq_doorbell_control = 143;
inline constexpr std::size_t cp_hqd_pq_control = 145;
inline constexpr std::size_t cp_hqd_dequeue_request = 152;
inline constexpr std::size_t cp_mqd_control = 162;
inline constexpr std::size_t cp_hqd_eop_base_addr_lo = 165;
inline constexpr std::size_t cp_hqd_eop_base_addr_hi = 166;
inline constexpr std::size_t cp_hqd_eop_control = 167;
inline constexpr std::size_t cp_hqd_ctx_save_base_addr_lo = 171;
inline constexpr std::size_t cp_hqd_ctx_save_base_addr_hi = 172;
inline constexpr std::size_t cp_hqd_ctx_save_control = 173;
inline constexpr std::size_t cp_hqd_cntl_stack_offset = 174;
inline constexpr std::size_t cp_hqd_cntl_stack_size = 175;
inline constexpr std::size_t cp_hqd_wg_state_offset = 176;
inline constexpr std::size_t cp_hqd_ctx_save_size = 177;
inline constexpr std::size_t cp_hqd_error = 179;
inline constexpr std::size_t cp_hqd_aql_control = 181;
inline constexpr std::size_t cp_hqd_pq_wptr_lo = 182;
inline constexpr std::size_t cp_hqd_pq_wptr_hi = 183;
}  // namespace mqd

constexpr std::size_t byte_offset(std::size_t dword_index) { return dword_index * 4; }

// The v9 SDMA MQD (struct v9_sdma_mqd, 128 dwords): the ring registers and the engine/queue ids.
namespace sdma_mqd {
inline constexpr std::size_t sdmax_rlcx_rb_cntl = 0;
inline constexpr std::size_t sdmax_rlcx_rb_base = 1;
inline constexpr std::size_t sdmax_rlcx_rb_base_hi = 2;
inline constexpr std::size_t sdmax_rlcx_rb_rptr_addr_hi = 8;
inline constexpr std::size_t sdmax_rlcx_rb_rptr_addr_lo = 9;
inline constexpr std::size_t sdma_engine_id = 126;
inline constexpr std::size_t sdma_queue_id = 127;
}  // namespace sdma_mqd

// The HQD register window that debugfs `hqds` dumps per CP slot: the 56 consecutive registers
// CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, which mirror MQD dwords 128..183 in order
// (docs/kfd-interface.md#hqds).
namespace hqd {
inline constexpr std::size_t kFirstMqdDword = mqd::cp_mqd_base_addr_lo;
inline constexpr std::size_t kLastMqdDword = mqd::cp_hqd_pq_wptr_hi;
inline constexpr std::size_t kRegisterCount = kLastMqdDword - kFirstMqdDword + 1;  // 56
static_assert(kRegisterCount == 56);

// Register byte address of CP_MQD_BASE_ADDR as printed by gfx942 kernels (real MI308X capture).
inline constexpr std::uint32_t kGfx942WindowBase = 0x0000c914u;

// Index of an MQD field inside the register window (e.g. index(cp_hqd_active) == 2).
constexpr std::size_t index(std::size_t mqd_dword) { return mqd_dword - kFirstMqdDword; }
// Register byte address of an MQD-mirrored register, given the window base of the ASIC.
constexpr std::uint32_t register_address(std::size_t mqd_dword,
                                         std::uint32_t window_base = kGfx942WindowBase) {
  return window_base + static_cast<std::uint32_t>(index(mqd_dword) * 4);
}

inline constexpr std::size_t mqd_base_lo = index(mqd::cp_mqd_base_addr_lo);   // 0
inline constexpr std::size_t mqd_base_hi = index(mqd::cp_mqd_base_addr_hi);   // 1
inline constexpr std::size_t active = index(mqd::cp_hqd_active);               // 2
inline constexpr std::size_t vmid = index(mqd::cp_hqd_vmid);                   // 3
inline constexpr std::size_t persistent_state = index(mqd::cp_hqd_persistent_state);
inline constexpr std::size_t pipe_priority = index(mqd::cp_hqd_pipe_priority);    // 5
inline constexpr std::size_t queue_priority = index(mqd::cp_hqd_queue_priority);  // 6
inline constexpr std::size_t quantum = index(mqd::cp_hqd_quantum);                // 7
inline constexpr std::size_t pq_base_lo = index(mqd::cp_hqd_pq_base_lo);          // 8
inline constexpr std::size_t pq_base_hi = index(mqd::cp_hqd_pq_base_hi);          // 9
inline constexpr std::size_t pq_rptr = index(mqd::cp_hqd_pq_rptr);                // 10
inline constexpr std::size_t rptr_report_lo = index(mqd::cp_hqd_pq_rptr_report_addr_lo);  // 11
inline constexpr std::size_t rptr_report_hi = index(mqd::cp_hqd_pq_rptr_report_addr_hi);  // 12
inline constexpr std::size_t wptr_poll_lo = index(mqd::cp_hqd_pq_wptr_poll_addr_lo);      // 13
inline constexpr std::size_t wptr_poll_hi = index(mqd::cp_hqd_pq_wptr_poll_addr_hi);      // 14
inline constexpr std::size_t doorbell_control = index(mqd::cp_hqd_pq_doorbell_control);
inline constexpr std::size_t pq_control = index(mqd::cp_hqd_pq_control);
inline constexpr std::size_t eop_base_lo = index(mqd::cp_hqd_eop_base_addr_lo);
inline constexpr std::size_t eop_base_hi = index(mqd::cp_hqd_eop_base_addr_hi);
inline constexpr std::size_t ctx_save_base_lo = index(mqd::cp_hqd_ctx_save_base_addr_lo);
inline constexpr std::size_t ctx_save_base_hi = index(mqd::cp_hqd_ctx_save_base_addr_hi);
inline constexpr std::size_t ctx_save_size = index(mqd::cp_hqd_ctx_save_size);
inline constexpr std::size_t pq_wptr_lo = index(mqd::cp_hqd_pq_wptr_lo);  // 54
inline constexpr std::size_t pq_wptr_hi = index(mqd::cp_hqd_pq_wptr_hi);  // 55
static_assert(active == 2 && pq_base_lo == 8 && pq_wptr_lo == 54 && pq_wptr_hi == 55);
}  // namespace hqd

// Register fields: what each MQD-mirrored HQD register holds, bit by bit. Source: the kernel's
// gc_9_4_3_sh_mask.h (the MI300 family the real captures come from; the fields decoded here have
// the same positions in gc_9_0_sh_mask.h), read through its register table with field bit ranges.
// A decoder reads a field with get() (the field value, shifted down) or bits() (the field left in
// place, for addresses and byte counts whose low bits the register does not store): both are
// plain masks and shifts, defined for every 32-bit input.
struct RegField {
  unsigned shift;
  unsigned width;  // 1..32

  constexpr std::uint32_t mask() const { return width >= 32 ? 0xffffffffu : ((1u << width) - 1u); }
  constexpr std::uint32_t get(std::uint32_t value) const { return (value >> shift) & mask(); }
  constexpr std::uint32_t bits(std::uint32_t value) const { return value & (mask() << shift); }
};

namespace field {
inline constexpr RegField mqd_base_addr{2, 30};         // CP_MQD_BASE_ADDR.BASE_ADDR, 31:2
inline constexpr RegField mqd_base_addr_hi{0, 16};      // CP_MQD_BASE_ADDR_HI.BASE_ADDR_HI, 15:0
inline constexpr RegField active{0, 1};                 // CP_HQD_ACTIVE.ACTIVE
inline constexpr RegField vmid{0, 4};                   // CP_HQD_VMID.VMID, 3:0
inline constexpr RegField ib_vmid{8, 4};                // CP_HQD_VMID.IB_VMID, 11:8
inline constexpr RegField pipe_priority{0, 2};          // CP_HQD_PIPE_PRIORITY.PIPE_PRIORITY, 1:0
inline constexpr RegField queue_priority{0, 4};         // CP_HQD_QUEUE_PRIORITY.PRIORITY_LEVEL, 3:0
inline constexpr RegField pq_base{0, 32};               // CP_HQD_PQ_BASE.ADDR (ring base >> 8)
inline constexpr RegField pq_base_hi{0, 8};             // CP_HQD_PQ_BASE_HI.ADDR_HI, 7:0
inline constexpr RegField pq_rptr{0, 32};               // CP_HQD_PQ_RPTR.CONSUMED_OFFSET
inline constexpr RegField rptr_report_addr{2, 30};      // CP_HQD_PQ_RPTR_REPORT_ADDR, 31:2
inline constexpr RegField rptr_report_addr_hi{0, 16};   // CP_HQD_PQ_RPTR_REPORT_ADDR_HI, 15:0
inline constexpr RegField wptr_poll_addr{3, 29};        // CP_HQD_PQ_WPTR_POLL_ADDR.WPTR_ADDR, 31:3
inline constexpr RegField wptr_poll_addr_hi{0, 16};     // CP_HQD_PQ_WPTR_POLL_ADDR_HI, 15:0
inline constexpr RegField doorbell_offset{2, 26};       // CP_HQD_PQ_DOORBELL_CONTROL, 27:2 (dwords)
inline constexpr RegField doorbell_en{30, 1};           // CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_EN
inline constexpr RegField queue_size{0, 6};             // CP_HQD_PQ_CONTROL.QUEUE_SIZE, 5:0
inline constexpr RegField eop_base_addr{0, 32};         // CP_HQD_EOP_BASE_ADDR (EOP base >> 8)
inline constexpr RegField eop_base_addr_hi{0, 8};       // CP_HQD_EOP_BASE_ADDR_HI, 7:0
inline constexpr RegField ctx_save_base_addr{12, 20};   // CP_HQD_CTX_SAVE_BASE_ADDR_LO.ADDR, 31:12
inline constexpr RegField ctx_save_base_addr_hi{0, 16}; // CP_HQD_CTX_SAVE_BASE_ADDR_HI, 15:0
inline constexpr RegField cntl_stack_offset{2, 14};     // CP_HQD_CNTL_STACK_OFFSET.OFFSET, 15:2
inline constexpr RegField cntl_stack_size{12, 4};       // CP_HQD_CNTL_STACK_SIZE.SIZE, 15:12
inline constexpr RegField wg_state_offset{2, 25};       // CP_HQD_WG_STATE_OFFSET.OFFSET, 26:2
inline constexpr RegField ctx_save_size{12, 15};        // CP_HQD_CTX_SAVE_SIZE.SIZE, 26:12
inline constexpr RegField pq_wptr{0, 32};               // CP_HQD_PQ_WPTR_LO / _HI
}  // namespace field

// SDMA RLC queue registers of the v9 SDMA MQD (sdma_4_4_2 register table).
namespace sdma_field {
inline constexpr RegField rb_base{0, 32};               // SDMAx_RLCy_RB_BASE.ADDR (ring base >> 8)
inline constexpr RegField rb_base_hi{0, 24};            // SDMAx_RLCy_RB_BASE_HI.ADDR, 23:0
inline constexpr RegField rb_rptr_addr_lo{2, 30};       // SDMAx_RLCy_RB_RPTR_ADDR_LO.ADDR, 31:2
inline constexpr RegField rb_rptr_addr_hi{0, 32};
}  // namespace sdma_field

// Ring base is stored >> 8 (256-byte aligned rings); the helpers keep that shift in one place.
constexpr std::uint64_t combine(std::uint32_t lo, std::uint32_t hi) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
// CP_HQD_PQ_BASE / _HI: a 40-bit field holding the ring base >> 8 (a 48-bit address).
constexpr std::uint64_t ring_base_from_pq_base(std::uint32_t lo, std::uint32_t hi) {
  return combine(field::pq_base.get(lo), field::pq_base_hi.get(hi)) << 8;
}
// CP_HQD_PQ_CONTROL.QUEUE_SIZE = log2(ring dwords) - 1 (mqd_update_v9), so the ring holds
// 2^(QUEUE_SIZE+3) bytes. The 6-bit field reaches 63; sizes from 2^64 bytes up (QUEUE_SIZE > 60)
// are not representable and no real ring has them: 0 for those.
constexpr std::uint64_t ring_bytes_from_pq_control(std::uint32_t pq_control) {
  const std::uint32_t qs = field::queue_size.get(pq_control);
  return qs > 60 ? 0 : std::uint64_t{1} << (qs + 3);
}
constexpr std::uint32_t pq_base_lo_of(std::uint64_t ring_base) {
  return static_cast<std::uint32_t>(ring_base >> 8);
}
constexpr std::uint32_t pq_base_hi_of(std::uint64_t ring_base) {
  return static_cast<std::uint32_t>(ring_base >> 40);
}

// CP_HQD_PIPE_PRIORITY as mqd_update_v9 derives it from the KFD queue priority 0..15.
constexpr std::uint32_t pipe_priority_for(std::uint32_t queue_priority) {
  return queue_priority <= 6 ? 0u : queue_priority <= 10 ? 1u : 2u;
}

// ROCr amd_queue_t: the HIP log's HWq is its address; read_dispatch_id (the queue's read pointer
// address given to KFD) sits 0x80 in, write_dispatch_id 0x38 in
// (docs/kfd-interface.md#joining-queues-across-sources).
inline constexpr std::uint64_t kAmdQueueReadDispatchIdOffset = 0x80;
inline constexpr std::uint64_t kAmdQueueWriteDispatchIdOffset = 0x38;

}  // namespace gpreempt::discovery::gfx9
