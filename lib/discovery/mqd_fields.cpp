#include "discovery/mqd_fields.h"

#include "discovery/gfx9_mqd_layout.h"

namespace gpreempt::discovery {

namespace {
std::uint32_t at(std::span<const std::uint32_t> v, std::size_t i) { return i < v.size() ? v[i] : 0; }

// CP_HQD_PQ_CONTROL.QUEUE_SIZE: ring of 2^(QUEUE_SIZE+1) dwords (gfx_v9 mqd_init).
std::uint64_t ring_bytes(std::uint32_t pq_control) {
  const std::uint32_t qs = pq_control & 0x3fu;
  return 4ull << (qs + 1);
}
}  // namespace

QueueDescriptor decode_hqd_window(std::span<const std::uint32_t> r) {
  namespace h = gfx9::hqd;
  QueueDescriptor d;
  d.mqd_base = gfx9::combine(at(r, h::mqd_base_lo), at(r, h::mqd_base_hi));
  d.active = (at(r, h::active) & 1u) != 0;
  d.vmid = at(r, h::vmid);
  d.persistent_state = at(r, h::persistent_state);
  d.pipe_priority = at(r, h::pipe_priority);
  d.queue_priority = at(r, h::queue_priority);
  d.quantum = at(r, h::quantum);
  d.ring_base = gfx9::ring_base_from_pq_base(at(r, h::pq_base_lo), at(r, h::pq_base_hi));
  d.rptr = at(r, h::pq_rptr);
  d.rptr_report_address = gfx9::combine(at(r, h::rptr_report_lo), at(r, h::rptr_report_hi));
  d.wptr_poll_address = gfx9::combine(at(r, h::wptr_poll_lo), at(r, h::wptr_poll_hi));
  d.doorbell_control = at(r, h::doorbell_control);
  d.doorbell_offset = (d.doorbell_control >> 2) & 0x3ffffffu;
  d.doorbell_enabled = ((d.doorbell_control >> 30) & 1u) != 0;
  d.pq_control = at(r, h::pq_control);
  d.ring_size = r.size() > h::pq_control ? ring_bytes(d.pq_control) : 0;
  d.eop_base = gfx9::combine(at(r, h::eop_base_lo), at(r, h::eop_base_hi)) << 8;
  d.ctx_save_base = gfx9::combine(at(r, h::ctx_save_base_lo), at(r, h::ctx_save_base_hi));
  d.ctx_save_size = at(r, h::ctx_save_size);
  d.cntl_stack_size = at(r, h::index(gfx9::mqd::cp_hqd_cntl_stack_size));
  d.cntl_stack_offset = at(r, h::index(gfx9::mqd::cp_hqd_cntl_stack_offset));
  d.wg_state_offset = at(r, h::index(gfx9::mqd::cp_hqd_wg_state_offset));
  d.wptr = gfx9::combine(at(r, h::pq_wptr_lo), at(r, h::pq_wptr_hi));
  return d;
}

QueueDescriptor decode_compute_mqd(std::span<const std::uint32_t> dwords) {
  std::span<const std::uint32_t> window;
  if (dwords.size() > gfx9::hqd::kFirstMqdDword) {
    window = dwords.subspan(gfx9::hqd::kFirstMqdDword,
                            std::min(gfx9::hqd::kRegisterCount,
                                     dwords.size() - gfx9::hqd::kFirstMqdDword));
  }
  QueueDescriptor d = decode_hqd_window(window);
  if (!dwords.empty()) d.header = dwords[gfx9::mqd::header];
  return d;
}

SdmaDescriptor decode_sdma_mqd(std::span<const std::uint32_t> d) {
  // struct v9_sdma_mqd: sdmax_rlcx_rb_cntl 0, rb_base 1, rb_base_hi 2, rb_rptr 3, rb_rptr_hi 4,
  // rb_wptr 5, rb_wptr_hi 6, rb_wptr_poll_cntl 7, rb_rptr_addr_hi 8, rb_rptr_addr_lo 9.
  SdmaDescriptor s;
  s.ring_base = gfx9::combine(at(d, 1), at(d, 2)) << 8;
  s.rptr_report_address = gfx9::combine(at(d, 9), at(d, 8));
  s.engine_id = at(d, gfx9::sdma_mqd::sdma_engine_id);
  s.queue_id = at(d, gfx9::sdma_mqd::sdma_queue_id);
  return s;
}

}  // namespace gpreempt::discovery
