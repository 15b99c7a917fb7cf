// DBG_TRAP's hardware debug settings of a target: wave launch override and mode, the per-device
// address-watch slots, and the trap flags the profile's capabilities allow
// (docs/kfd-interface.md#debug-trap-operations).
#include <gpreempt/kfd_abi.h>

#include <cerrno>

#include "device_state.h"
#include "topology_caps.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;
using detail::CallPtr;
using detail::Outcome;
using detail::Process;
using detail::ProcessPtr;
using detail::store;

Outcome KfdDevice::State::dbg_set_wave_launch_override(const CallPtr& call, const ProcessPtr& t,
                                                       kfd_ioctl_dbg_trap_args& a) {
  // kfd_dbg_validate_trap_override_request(): the supported mask starts as all ones and is
  // written back on every path; a bad mode fails before the device narrows it.
  auto& o = a.launch_override;
  if (o.override_mode != KFD_DBG_TRAP_OVERRIDE_OR &&
      o.override_mode != KFD_DBG_TRAP_OVERRIDE_REPLACE) {
    o.support_request_mask = 0xffffffffu;
    store(call, a);
    return Outcome::done(-EINVAL);
  }
  const uint32_t supported = caps::wave_launch_trap_override_supported(profile);
  const uint32_t request = o.support_request_mask, bits = o.enable_mask;
  o.support_request_mask = supported;
  if (request & ~supported) {
    store(call, a);
    return Outcome::done(-EACCES);
  }
  // set_wave_launch_trap_override(): requested bits replaced, the others kept; the mode
  // (OR / REPLACE) tells the hardware how to combine them with the wave's own mask.
  const uint32_t prev = t->wave_launch_override_mask;
  t->wave_launch_override_mask = (bits & request) | (prev & ~request);
  t->wave_launch_override_mode = o.override_mode;
  o.enable_mask = prev;
  store(call, a);
  return Outcome::done(0);
}

Outcome KfdDevice::State::dbg_set_wave_launch_mode(const CallPtr&, const ProcessPtr& t,
                                                   kfd_ioctl_dbg_trap_args& a) {
  const uint32_t m = a.launch_mode.launch_mode;
  if (m != KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL && m != KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT &&
      m != KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG)
    return Outcome::done(-EINVAL);
  t->wave_launch_mode = m;
  return Outcome::done(0);
}

Outcome KfdDevice::State::dbg_set_address_watch(const CallPtr& call, const ProcessPtr& t,
                                                kfd_ioctl_dbg_trap_args& a) {
  // kfd_dbg_get_dev_watch_id(): the four watch slots belong to the device, shared by every
  // process on it; the id field is INVALID (4) when none is free.
  auto& w = a.set_node_address_watch;
  auto* d = t->device(w.gpu_id);
  uint32_t& in_use = device_watch_ids[w.gpu_id];
  w.id = detail::kAddressWatchSlots;
  for (uint32_t i = 0; i < detail::kAddressWatchSlots; ++i) {
    if (in_use & (1u << i)) continue;
    in_use |= 1u << i;
    d->watch_used[i] = true;
    w.id = i;
    break;
  }
  store(call, a);
  return Outcome::done(w.id == detail::kAddressWatchSlots ? -ENOMEM : 0);
}

Outcome KfdDevice::State::dbg_clear_address_watch(const CallPtr&, const ProcessPtr& t,
                                                  kfd_ioctl_dbg_trap_args& a) {
  auto& w = a.clear_node_address_watch;
  auto* d = t->device(w.gpu_id);
  if (w.id >= detail::kAddressWatchSlots || !d->watch_used[w.id]) return Outcome::done(-EINVAL);
  d->watch_used[w.id] = false;
  device_watch_ids[w.gpu_id] &= ~(1u << w.id);
  return Outcome::done(0);
}

Outcome KfdDevice::State::dbg_set_flags(const CallPtr& call, const ProcessPtr& t,
                                        kfd_ioctl_dbg_trap_args& a) {
  const uint32_t prev = t->trap_flags;
  const uint32_t flags = a.set_flags.flags;
  const uint32_t cap = profile.capability, cap2 = profile.capability2;
  if (((flags & KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP) &&
       !(cap & caps::HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED)) ||
      ((flags & KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP) &&
       !(cap & caps::HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED)) ||
      ((flags & KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE) &&
       !(cap2 & caps::HSA_CAP2_TRAP_DEBUG_LDS_OUT_OF_ADDR_RANGE_SUPPORTED))) {
    a.set_flags.flags = prev;
    store(call, a);
    return Outcome::done(-EACCES);
  }
  t->trap_flags = flags;
  a.set_flags.flags = prev;
  store(call, a);
  return Outcome::done(0);
}

void KfdDevice::State::clear_address_watches(Process& p) {
  for (auto& d : p.devices) {
    for (uint32_t i = 0; i < detail::kAddressWatchSlots; ++i)
      if (d.watch_used[i]) device_watch_ids[d.gpu_id] &= ~(1u << i);
    d.watch_used.fill(false);
  }
}

}  // namespace gpreempt::sim
