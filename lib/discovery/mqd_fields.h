// The GFX9 queue descriptor fields gpreempt cares about, decoded from either a full MQD (debugfs
// `mqds`) or the 56-register HQD window (debugfs `hqds`), which mirror each other
// (docs/kfd-interface.md#joining-queues-across-sources).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace gpreempt::discovery {

struct QueueDescriptor {
  std::optional<std::uint32_t> header;  // MQD dword 0; absent when decoded from HQD registers
  std::uint64_t mqd_base = 0;           // CP_MQD_BASE_ADDR: GPU address of this (per-XCC) MQD
  bool active = false;                  // CP_HQD_ACTIVE bit 0
  std::uint32_t vmid = 0;
  std::uint32_t persistent_state = 0;
  std::uint32_t pipe_priority = 0;
  std::uint32_t queue_priority = 0;
  std::uint32_t quantum = 0;
  std::uint64_t ring_base = 0;          // CP_HQD_PQ_BASE << 8
  std::uint64_t ring_size = 0;          // bytes, from CP_HQD_PQ_CONTROL.QUEUE_SIZE
  std::uint32_t rptr = 0;               // CP_HQD_PQ_RPTR (dwords into the ring)
  std::uint64_t rptr_report_address = 0;
  std::uint64_t wptr_poll_address = 0;
  std::uint32_t doorbell_control = 0;
  std::uint32_t doorbell_offset = 0;    // DOORBELL_OFFSET field (bits 27..2), in dwords
  bool doorbell_enabled = false;        // DOORBELL_EN (bit 30)
  std::uint32_t pq_control = 0;
  std::uint64_t eop_base = 0;           // CP_HQD_EOP_BASE_ADDR << 8
  std::uint64_t ctx_save_base = 0;
  std::uint32_t ctx_save_size = 0;
  std::uint32_t cntl_stack_size = 0;
  std::uint32_t cntl_stack_offset = 0;
  std::uint32_t wg_state_offset = 0;
  std::uint64_t wptr = 0;               // CP_HQD_PQ_WPTR_LO/HI
};

// `regs` = the 56 registers CP_MQD_BASE_ADDR..CP_HQD_PQ_WPTR_HI; shorter spans decode what is there.
QueueDescriptor decode_hqd_window(std::span<const std::uint32_t> regs);
// `dwords` = a full 512-dword v9_mqd (or as much of it as was dumped).
QueueDescriptor decode_compute_mqd(std::span<const std::uint32_t> dwords);

// v9 SDMA MQD: only the engine/queue ids and the ring addresses are interpreted.
struct SdmaDescriptor {
  std::uint32_t engine_id = 0;
  std::uint32_t queue_id = 0;
  std::uint64_t ring_base = 0;           // SDMAx_RLCx_RB_BASE/_HI << 8
  std::uint64_t rptr_report_address = 0; // SDMAx_RLCx_RB_RPTR_ADDR_HI/LO
};
SdmaDescriptor decode_sdma_mqd(std::span<const std::uint32_t> dwords);

}  // namespace gpreempt::discovery
