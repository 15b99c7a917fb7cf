// The pre-1.13 ioctls libhsakmt issues while it opens the device (hsaKmtOpenKFD): process
// apertures, ACQUIRE_VM, SET_MEMORY_POLICY and SET_XNACK_MODE. Their layouts are in Debian's own
// <linux/kfd_ioctl.h> (KFD 1.11), so this file uses that header rather than repeating them.
#include <linux/kfd_ioctl.h>

#include <time.h>

#include <algorithm>
#include <cerrno>

#include "device_state.h"

namespace gpreempt::sim {

using detail::CallPtr;
using detail::load;
using detail::Outcome;
using detail::ProcessPtr;
using detail::store;

namespace {

// The request numbers as <linux/kfd_ioctl.h> defines them.
constexpr uint32_t kNrSetMemoryPolicy = _IOC_NR(AMDKFD_IOC_SET_MEMORY_POLICY);
constexpr uint32_t kNrGetClockCounters = _IOC_NR(AMDKFD_IOC_GET_CLOCK_COUNTERS);
constexpr uint32_t kNrSetScratchBackingVa = _IOC_NR(AMDKFD_IOC_SET_SCRATCH_BACKING_VA);
constexpr uint32_t kNrGetTileConfig = _IOC_NR(AMDKFD_IOC_GET_TILE_CONFIG);
constexpr uint32_t kNrSetTrapHandler = _IOC_NR(AMDKFD_IOC_SET_TRAP_HANDLER);
// GFX9 keeps the tile arrays of older chips (amdgpu gfx.config) but never fills them.
constexpr uint32_t kTileConfigs = 32;
constexpr uint32_t kMacroTileConfigs = 16;
constexpr uint32_t kNrGetProcessAperturesNew = _IOC_NR(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW);
constexpr uint32_t kNrAcquireVm = _IOC_NR(AMDKFD_IOC_ACQUIRE_VM);
constexpr uint32_t kNrSetXnackMode = _IOC_NR(AMDKFD_IOC_SET_XNACK_MODE);

}  // namespace

std::optional<detail::IoctlTableEntry> detail::legacy_ioctl_entry(uint32_t nr) {
  switch (nr) {
    case kNrSetMemoryPolicy:
      return IoctlTableEntry{sizeof(kfd_ioctl_set_memory_policy_args), true, false};
    case kNrGetProcessAperturesNew:
      return IoctlTableEntry{sizeof(kfd_ioctl_get_process_apertures_new_args), true, true};
    case kNrAcquireVm:
      return IoctlTableEntry{sizeof(kfd_ioctl_acquire_vm_args), true, false};
    case kNrSetXnackMode:
      return IoctlTableEntry{sizeof(kfd_ioctl_set_xnack_mode_args), true, true};
    case kNrGetClockCounters:
      return IoctlTableEntry{sizeof(kfd_ioctl_get_clock_counters_args), true, true};
    case kNrSetScratchBackingVa:
      return IoctlTableEntry{sizeof(kfd_ioctl_set_scratch_backing_va_args), true, true};
    case kNrSetTrapHandler:
      return IoctlTableEntry{sizeof(kfd_ioctl_set_trap_handler_args), true, false};
    case kNrGetTileConfig:
      return IoctlTableEntry{sizeof(kfd_ioctl_get_tile_config_args), true, true};
    default:
      if (auto e = memory_ioctl_entry(nr)) return e;
      return event_ioctl_entry(nr);
  }
}

detail::Apertures detail::gfx9_apertures() {
  // kfd_init_apertures_v9(): LDS and scratch in the 1st and 2nd 2^48 window (4 GiB each), GPUVM
  // from the reserved bottom (2 MiB) to the top of the 47-bit user address space.
  Apertures a;
  a.lds_base = 1ull << 48;
  a.lds_limit = a.lds_base | 0xFFFFFFFFull;
  a.scratch_base = 2ull << 48;
  a.scratch_limit = a.scratch_base | 0xFFFFFFFFull;
  a.gpuvm_base = 1ull << 21;
  a.gpuvm_limit = (1ull << 47) - 1;
  return a;
}

Outcome KfdDevice::State::legacy_ioctl(const CallPtr& call) {
  ProcessPtr p = find_process(call->caller.pid);
  if (!p) return Outcome::done(-EINVAL);
  if (detail::memory_ioctl_entry(call->nr)) return memory_ioctl(call, p);
  if (detail::event_ioctl_entry(call->nr)) return event_ioctl(call, p);
  switch (call->nr) {
    case kNrGetClockCounters: {
      // The one ioctl that reads a clock: the kernel's raw monotonic and boot-time nanoseconds,
      // and the GPU's 100 MHz timestamp counter (0 for a gpu_id that is not a GPU), the one its
      // packet processor stamps completion signals with (Hws::gpu_clock_counter).
      auto a = load<kfd_ioctl_get_clock_counters_args>(call);
      auto ns = [](clockid_t id) {
        timespec ts{};
        clock_gettime(id, &ts);
        return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
      };
      a.cpu_clock_counter = ns(CLOCK_MONOTONIC_RAW);
      a.system_clock_counter = ns(CLOCK_BOOTTIME);
      a.gpu_clock_counter = p->device(a.gpu_id) ? hws->gpu_clock_counter() : 0;
      a.system_clock_freq = 1000000000ull;
      store(call, a);
      return Outcome::done(0);
    }
    case kNrSetScratchBackingVa: {
      auto a = load<kfd_ioctl_set_scratch_backing_va_args>(call);
      if (!p->device(a.gpu_id)) return Outcome::done(-EINVAL);
      return Outcome::done(0);  // qpd.sh_hidden_private_base: only the no-HWS path programs it
    }
    case kNrGetTileConfig: {
      // amdgpu_amdkfd_get_tile_config: at most the arrays' sizes are copied; a fault sets that
      // count to 0 and fails EFAULT (the tile array first).
      auto a = load<kfd_ioctl_get_tile_config_args>(call);
      if (!p->device(a.gpu_id)) return Outcome::done(-EINVAL);
      a.gb_addr_config = profile.gb_addr_config;
      a.num_banks = 0;  // not set from GFX9 on
      a.num_ranks = 0;
      const std::vector<uint32_t> zeros(kTileConfigs, 0);
      // `count` (at most `limit`) zeros to `ptr`; a fault leaves the count 0.
      auto zero_fill = [&](uint32_t& count, uint32_t limit, uint64_t ptr) {
        count = std::min(count, limit);
        if (count && !env.write_memory(call->caller.pid, ptr, zeros.data(), count * sizeof(uint32_t))) {
          count = 0;
          return false;
        }
        return true;
      };
      const bool ok = zero_fill(a.num_tile_configs, kTileConfigs, a.tile_config_ptr) &&
                      zero_fill(a.num_macro_tile_configs, kMacroTileConfigs, a.macro_tile_config_ptr);
      store(call, a);
      return Outcome::done(ok ? 0 : -EFAULT);
    }
    case kNrSetTrapHandler: {
      auto a = load<kfd_ioctl_set_trap_handler_args>(call);
      if (!p->device(a.gpu_id)) return Outcome::done(-EINVAL);
      return Outcome::done(0);  // TBA/TMA go into the queues' MQDs; no wave ever traps here
    }
    case kNrGetProcessAperturesNew: {
      auto a = load<kfd_ioctl_get_process_apertures_new_args>(call);
      if (a.num_of_nodes == 0) {  // a count query
        a.num_of_nodes = static_cast<uint32_t>(p->devices.size());
        store(call, a);
        return Outcome::done(0);
      }
      std::vector<kfd_process_device_apertures> pa;
      const auto ap = detail::gfx9_apertures();
      for (std::size_t i = 0; i < p->devices.size() && i < a.num_of_nodes; ++i) {
        kfd_process_device_apertures d{};
        d.lds_base = ap.lds_base;
        d.lds_limit = ap.lds_limit;
        d.scratch_base = ap.scratch_base;
        d.scratch_limit = ap.scratch_limit;
        d.gpuvm_base = ap.gpuvm_base;
        d.gpuvm_limit = ap.gpuvm_limit;
        d.gpu_id = p->devices[i].gpu_id;
        pa.push_back(d);
      }
      a.num_of_nodes = static_cast<uint32_t>(pa.size());
      store(call, a);
      if (!env.write_memory(call->caller.pid, a.kfd_process_device_apertures_ptr, pa.data(),
                            pa.size() * sizeof(kfd_process_device_apertures)))
        return Outcome::done(-EFAULT);
      return Outcome::done(0);
    }
    case kNrAcquireVm: {
      auto a = load<kfd_ioctl_acquire_vm_args>(call);
      // kfd_ioctl_acquire_vm: fget(drm_fd) (the file must be open in the caller's table), then
      // the process's device.
      auto f = env.acquire_file(call->caller.pid, static_cast<int>(a.drm_fd));
      if (!f) return Outcome::done(-EINVAL);
      auto* d = p->device(a.gpu_id);
      if (!d) {
        env.release_file(*f);
        return Outcome::done(-EINVAL);
      }
      // The VM exists already: the same file again is fine, another file (even of the same
      // render node) is -EBUSY.
      if (d->drm_file) {
        const bool same = env.same_file(*d->drm_file, *f);
        env.release_file(*f);
        return Outcome::done(same ? 0 : -EBUSY);
      }
      // kfd_process_device_init_vm -> amdgpu_file_to_fpriv: a file that is not amdgpu's DRM file
      // has no VM to take. The file of another GPU's render node passes: neither function asks
      // which device the file belongs to.
      if (!env.drm_render_minor(*f)) {
        env.release_file(*f);
        return Outcome::done(-EINVAL);
      }
      // amdgpu_amdkfd_gpuvm_acquire_process_vm: the file's VM is already a compute VM ("Already a
      // compute VM?") when a device, of this process or another sharing the file, took it.
      for (const auto& [opid, o] : processes)
        for (const auto& od : o->devices)
          if (od.drm_file && env.same_file(*od.drm_file, *f)) {
            env.release_file(*f);
            return Outcome::done(-EINVAL);
          }
      // kfd_process_device_init_vm: the device's VM now exists, buffers can be allocated, and the
      // device keeps the file's reference.
      d->drm_file = *f;
      d->vm_acquired = true;
      return Outcome::done(0);
    }
    case kNrSetMemoryPolicy: {
      auto a = load<kfd_ioctl_set_memory_policy_args>(call);
      auto valid = [](uint32_t policy) {
        return policy == KFD_IOC_CACHE_POLICY_COHERENT ||
               policy == KFD_IOC_CACHE_POLICY_NONCOHERENT;
      };
      if (!valid(a.default_policy) || !valid(a.alternate_policy)) return Outcome::done(-EINVAL);
      if (!p->device(a.gpu_id)) return Outcome::done(-EINVAL);
      return Outcome::done(0);
    }
    case kNrSetXnackMode: {
      auto a = load<kfd_ioctl_set_xnack_mode_args>(call);
      if (a.xnack_enabled >= 0) {
        if (!p->queues.empty()) return Outcome::done(-EBUSY);
        p->xnack_enabled = a.xnack_enabled != 0;  // every simulated GPU supports XNACK
      } else {
        a.xnack_enabled = p->xnack_enabled ? 1 : 0;
        store(call, a);
      }
      return Outcome::done(0);
    }
  }
  return Outcome::done(-ENOTTY);
}

}  // namespace gpreempt::sim
