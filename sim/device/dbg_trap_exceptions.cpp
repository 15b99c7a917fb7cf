// DBG_TRAP's reporting ops: which exceptions raise the event file (SET_EXCEPTIONS_ENABLED), the
// queries of pending exceptions and their details, and the queue and device snapshots
// (docs/kfd-interface.md#debug-trap-operations, #queue-snapshot).
#include <gpreempt/kfd_abi.h>

#include <algorithm>
#include <cerrno>

#include "device_state.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;
using detail::CallPtr;
using detail::Outcome;
using detail::ProcessPtr;
using detail::Queue;
using detail::store;

namespace {

bool ec_is_queue(uint32_t ec) {
  return ec >= 1 && ec < EC_MAX && (KFD_EC_MASK(ec) & KFD_EC_MASK_QUEUE);
}
bool ec_is_device(uint32_t ec) {
  return ec >= 1 && ec < EC_MAX && (KFD_EC_MASK(ec) & KFD_EC_MASK_DEVICE);
}
bool ec_is_process(uint32_t ec) {
  return ec >= 1 && ec < EC_MAX && (KFD_EC_MASK(ec) & KFD_EC_MASK_PROCESS);
}

}  // namespace

Outcome KfdDevice::State::dbg_set_exceptions_enabled(const CallPtr&, const ProcessPtr& t,
                                                     kfd_ioctl_dbg_trap_args& a) {
  t->exception_enable_mask = a.set_exceptions_enabled.exception_mask;
  uint64_t found = t->exception_status;
  for (const auto& q : t->queues) found |= q.exception_status;
  for (const auto& d : t->devices) found |= d.exception_status;
  if (t->exception_enable_mask & found) signal(*t);
  return Outcome::done(0);
}

Outcome KfdDevice::State::dbg_query_debug_event(const CallPtr& call, const ProcessPtr& t,
                                                kfd_ioctl_dbg_trap_args& a) {
  auto& e = a.query_debug_event;
  const uint64_t clear = e.exception_mask;
  e.exception_mask = 0;
  e.gpu_id = 0;
  e.queue_id = 0;
  bool found = false;
  for (auto& q : t->queues) {
    if (!(t->exception_enable_mask & q.exception_status)) continue;
    e.exception_mask = q.exception_status;
    e.queue_id = q.id;
    e.gpu_id = q.gpu_id;
    q.exception_status &= ~clear;
    found = true;
    break;
  }
  if (!found)
    for (auto& d : t->devices) {
      if (!(t->exception_enable_mask & d.exception_status)) continue;
      e.exception_mask = d.exception_status;
      e.gpu_id = d.gpu_id;
      d.exception_status &= ~clear;
      found = true;
      break;
    }
  if (!found && (t->exception_enable_mask & t->exception_status)) {
    e.exception_mask = t->exception_status;
    t->exception_status &= ~clear;
  }
  store(call, a);
  return Outcome::done(e.exception_mask ? 0 : -EAGAIN);
}

Outcome KfdDevice::State::dbg_query_exception_info(const CallPtr& call, const ProcessPtr& t,
                                                   kfd_ioctl_dbg_trap_args& a) {
  const Caller& c = call->caller;
  auto& x = a.query_exception_info;
  const uint32_t ec = x.exception_code;
  if (!x.info_ptr) return Outcome::done(-EINVAL);  // checked first, for every source
  uint64_t* status = nullptr;
  uint32_t actual = 0;
  if (ec_is_queue(ec)) {
    Queue* q = t->queue(x.source_id);
    if (!q) return Outcome::done(-EINVAL);
    if (!(q->exception_status & KFD_EC_MASK(ec))) return Outcome::done(-ENODATA);
    status = &q->exception_status;
  } else if (ec_is_device(ec)) {
    auto* d = t->device(x.source_id);
    if (!d) return Outcome::done(-EINVAL);
    if (!(d->exception_status & KFD_EC_MASK(ec))) return Outcome::done(-ENODATA);
    // No VM-fault record is simulated: EC_DEVICE_MEMORY_VIOLATION carries 0 bytes.
    status = &d->exception_status;
  } else if (ec_is_process(ec)) {
    if (!(t->exception_status & KFD_EC_MASK(ec))) return Outcome::done(-ENODATA);
    if (ec == EC_PROCESS_RUNTIME) {
      kfd_runtime_info ri{t->r_debug, t->runtime_state, t->ttmp_setup};
      const uint32_t n = std::min<uint32_t>(x.info_size, sizeof(ri));
      if (n && !env.write_memory(c.pid, x.info_ptr, &ri, n)) return Outcome::done(-EFAULT);
      actual = sizeof(ri);
    }
    status = &t->exception_status;
  } else {
    return Outcome::done(-EINVAL);
  }
  x.info_size = actual;
  if (x.clear_exception) *status &= ~KFD_EC_MASK(ec);
  store(call, a);
  return Outcome::done(0);
}

Outcome KfdDevice::State::dbg_queue_snapshot(const CallPtr& call, const ProcessPtr& t,
                                             kfd_ioctl_dbg_trap_args& a) {
  const Caller& c = call->caller;
  auto& s = a.queue_snapshot;
  const uint32_t want = s.num_queues, stride = s.entry_size;
  s.num_queues = 0;
  if (stride == 0) {
    store(call, a);
    return Outcome::done(-EINVAL);
  }
  s.entry_size = std::min<uint32_t>(stride, sizeof(kfd_queue_snapshot_entry));
  long r = 0;
  uint64_t buf = s.snapshot_buf_ptr;
  for (auto& q : t->queues) {
    if (s.num_queues < want) {
      kfd_queue_snapshot_entry e{};
      e.exception_status = q.exception_status;
      e.ring_base_address = q.ring_base;
      e.write_pointer_address = q.wptr;
      e.read_pointer_address = q.rptr;
      e.ctx_save_restore_address = q.ctx_save_addr;
      e.queue_id = q.id;
      e.gpu_id = q.gpu_id;
      e.ring_size = q.ring_size;
      // BY_ENG_ID queues are reported as what they are on the engine they got.
      e.queue_type =
          q.uapi_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
              ? (q.sdma_engine >= profile.num_sdma_engines ? KFD_IOC_QUEUE_TYPE_SDMA_XGMI
                                                           : KFD_IOC_QUEUE_TYPE_SDMA)
              : q.uapi_type;
      e.ctx_save_restore_area_size = q.ctx_save_size;
      q.exception_status &= ~s.exception_mask;
      if (!env.write_memory(c.pid, buf, &e, s.entry_size)) {
        r = -EFAULT;
        break;
      }
      buf += stride;
    }
    ++s.num_queues;
  }
  store(call, a);
  return Outcome::done(r);
}

Outcome KfdDevice::State::dbg_device_snapshot(const CallPtr& call, const ProcessPtr& t,
                                              kfd_ioctl_dbg_trap_args& a) {
  const Caller& c = call->caller;
  auto& s = a.device_snapshot;
  if (!s.snapshot_buf_ptr) return Outcome::done(-EINVAL);
  const uint32_t stride = s.entry_size;
  const uint32_t n = std::min<uint32_t>(s.num_devices, t->devices.size());
  const uint32_t ksize = options.minor_version <= 16
                             ? static_cast<uint32_t>(KFD_DBG_DEVICE_INFO_ENTRY_SIZE_V116)
                             : sizeof(kfd_dbg_device_info_entry);
  s.num_devices = static_cast<uint32_t>(t->devices.size());
  s.entry_size = std::min(stride, ksize);
  long r = 0;
  uint64_t buf = s.snapshot_buf_ptr;
  for (uint32_t i = 0; i < n; ++i) {
    auto& d = t->devices[i];
    const GpuInstance* g = nullptr;
    for (const auto& gi : profile.gpus)
      if (gi.gpu_id == d.gpu_id) g = &gi;
    kfd_dbg_device_info_entry e{};
    e.exception_status = d.exception_status;
    const auto ap = detail::gfx9_apertures();
    e.lds_base = ap.lds_base;
    e.lds_limit = ap.lds_limit;
    e.scratch_base = ap.scratch_base;
    e.scratch_limit = ap.scratch_limit;
    e.gpuvm_base = ap.gpuvm_base;
    e.gpuvm_limit = ap.gpuvm_limit;
    e.gpu_id = d.gpu_id;
    e.location_id = g ? g->location_id : 0;
    e.vendor_id = profile.vendor_id;
    e.device_id = profile.device_id;
    e.revision_id = profile.revision_id;
    e.subsystem_vendor_id = profile.subsystem_vendor_id;
    e.subsystem_device_id = profile.subsystem_device_id;
    e.fw_version = profile.fw_version;
    e.gfx_target_version = profile.gfx_target_version;
    e.simd_count = profile.simd_count();
    e.max_waves_per_simd = profile.max_waves_per_simd;
    e.array_count = profile.array_count;
    e.simd_arrays_per_engine = profile.simd_arrays_per_engine;
    e.num_xcc = profile.num_xcc;
    e.capability = profile.capability;
    e.debug_prop = static_cast<uint32_t>(profile.debug_prop);
    e.capability2 = profile.capability2;
    if (!env.write_memory(c.pid, buf, &e, s.entry_size)) {
      r = -EFAULT;
      break;
    }
    buf += stride;
    d.exception_status &= ~s.exception_mask;
  }
  store(call, a);
  return Outcome::done(r);
}

}  // namespace gpreempt::sim
