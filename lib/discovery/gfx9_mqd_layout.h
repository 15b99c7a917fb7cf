// GFX9 memory queue descriptor (struct v9_mqd) layout: the dword indices of the fields gpreempt
// reads or writes, shared by the debugfs decoders (lib/discovery) and the simulated device that
// renders the same files (sim/device), so both sides agree by construction.
//
// Source: ../shared/kfd/v9_mqd_dwords.tsv and FACTS §14/§18 (every reserved_N of the kernel's
// v9_structs.h static-asserted at dword N). Byte offset = 4 × dword index.
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

// The v9 SDMA MQD (struct v9_sdma_mqd, 128 dwords): only the engine/queue ids are used.
namespace sdma_mqd {
inline constexpr std::size_t sdma_engine_id = 126;
inline constexpr std::size_t sdma_queue_id = 127;
}  // namespace sdma_mqd

// The HQD register window that debugfs `hqds` dumps per CP slot: the 56 consecutive registers
// CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, which mirror MQD dwords 128..183 in order (FACTS §18).
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

// Ring base is stored >> 8 (256-byte aligned rings); the helpers keep that shift in one place.
constexpr std::uint64_t combine(std::uint32_t lo, std::uint32_t hi) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
constexpr std::uint64_t ring_base_from_pq_base(std::uint32_t lo, std::uint32_t hi) {
  return combine(lo, hi) << 8;
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
// address given to KFD) sits 0x80 in, write_dispatch_id 0x38 in (FACTS §18).
inline constexpr std::uint64_t kAmdQueueReadDispatchIdOffset = 0x80;
inline constexpr std::uint64_t kAmdQueueWriteDispatchIdOffset = 0x38;

}  // namespace gpreempt::discovery::gfx9
