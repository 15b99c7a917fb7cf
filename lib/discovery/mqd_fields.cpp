#include "discovery/mqd_fields.h"

#include "discovery/gfx9_mqd_layout.h"

namespace gpreempt::discovery {

namespace {
std::uint32_t at(std::span<const std::uint32_t> v, std::size_t i) { return i < v.size() ? v[i] : 0; }

// A 64-bit address from a low register whose field keeps its low bits in place and a high
// register whose field is the upper bits.
std::uint64_t address(std::uint32_t lo, gfx9::RegField lo_field, std::uint32_t hi, gfx9::RegField hi_field) {
  return gfx9::combine(lo_field.bits(lo), hi_field.get(hi));
}
}  // namespace

QueueDescriptor decode_hqd_window(std::span<const std::uint32_t> r) {
  namespace h = gfx9::hqd;
  namespace f = gfx9::field;
  QueueDescriptor d;
  d.mqd_base = address(at(r, h::mqd_base_lo), f::mqd_base_addr, at(r, h::mqd_base_hi), f::mqd_base_addr_hi);
  d.active = f::active.get(at(r, h::active)) != 0;
  d.vmid = f::vmid.get(at(r, h::vmid));
  d.persistent_state = at(r, h::persistent_state);
  d.pipe_priority = f::pipe_priority.get(at(r, h::pipe_priority));
  d.queue_priority = f::queue_priority.get(at(r, h::queue_priority));
  d.quantum = at(r, h::quantum);
  d.ring_base = gfx9::ring_base_from_pq_base(at(r, h::pq_base_lo), at(r, h::pq_base_hi));
  d.rptr = f::pq_rptr.get(at(r, h::pq_rptr));
  d.rptr_report_address =
      address(at(r, h::rptr_report_lo), f::rptr_report_addr, at(r, h::rptr_report_hi), f::rptr_report_addr_hi);
  d.wptr_poll_address =
      address(at(r, h::wptr_poll_lo), f::wptr_poll_addr, at(r, h::wptr_poll_hi), f::wptr_poll_addr_hi);
  d.doorbell_control = at(r, h::doorbell_control);
  d.doorbell_offset = f::doorbell_offset.get(d.doorbell_control);
  d.doorbell_enabled = f::doorbell_en.get(d.doorbell_control) != 0;
  d.pq_control = at(r, h::pq_control);
  d.ring_size = r.size() > h::pq_control ? gfx9::ring_bytes_from_pq_control(d.pq_control) : 0;
  d.eop_base = gfx9::combine(f::eop_base_addr.get(at(r, h::eop_base_lo)), f::eop_base_addr_hi.get(at(r, h::eop_base_hi)))
               << 8;
  d.ctx_save_base = address(at(r, h::ctx_save_base_lo), f::ctx_save_base_addr, at(r, h::ctx_save_base_hi),
                            f::ctx_save_base_addr_hi);
  d.ctx_save_size = f::ctx_save_size.bits(at(r, h::ctx_save_size));
  d.cntl_stack_size = f::cntl_stack_size.bits(at(r, h::index(gfx9::mqd::cp_hqd_cntl_stack_size)));
  d.cntl_stack_offset = f::cntl_stack_offset.bits(at(r, h::index(gfx9::mqd::cp_hqd_cntl_stack_offset)));
  d.wg_state_offset = f::wg_state_offset.bits(at(r, h::index(gfx9::mqd::cp_hqd_wg_state_offset)));
  d.wptr = gfx9::combine(f::pq_wptr.get(at(r, h::pq_wptr_lo)), f::pq_wptr.get(at(r, h::pq_wptr_hi)));
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
  namespace m = gfx9::sdma_mqd;
  namespace f = gfx9::sdma_field;
  SdmaDescriptor s;
  s.ring_base = gfx9::combine(f::rb_base.get(at(d, m::sdmax_rlcx_rb_base)), f::rb_base_hi.get(at(d, m::sdmax_rlcx_rb_base_hi)))
                << 8;
  s.rptr_report_address = address(at(d, m::sdmax_rlcx_rb_rptr_addr_lo), f::rb_rptr_addr_lo,
                                  at(d, m::sdmax_rlcx_rb_rptr_addr_hi), f::rb_rptr_addr_hi);
  s.engine_id = at(d, m::sdma_engine_id);
  s.queue_id = at(d, m::sdma_queue_id);
  return s;
}

}  // namespace gpreempt::discovery
