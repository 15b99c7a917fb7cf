// GPU memory: ALLOC_MEMORY_OF_GPU, FREE_MEMORY_OF_GPU, MAP_MEMORY_TO_GPU, UNMAP_MEMORY_FROM_GPU and
// AVAILABLE_MEMORY (docs/kfd-interface.md#memory). The simulated GPU has no page tables: a buffer
// is its bookkeeping (handle, address, size, which GPUs map it) and, for the CPU, whatever the
// process maps at its mmap offset — the shim backs that with shared memory the daemon also sees.
#include <linux/kfd_ioctl.h>

#include <algorithm>
#include <cerrno>

#include "device_state.h"

namespace gpreempt::sim {

using detail::Bo;
using detail::CallPtr;
using detail::load;
using detail::Outcome;
using detail::ProcessPtr;
using detail::store;

namespace {

// The request numbers as <linux/kfd_ioctl.h> defines them.
constexpr uint32_t kNrAlloc = _IOC_NR(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU);
constexpr uint32_t kNrFree = _IOC_NR(AMDKFD_IOC_FREE_MEMORY_OF_GPU);
constexpr uint32_t kNrMap = _IOC_NR(AMDKFD_IOC_MAP_MEMORY_TO_GPU);
constexpr uint32_t kNrUnmap = _IOC_NR(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU);
constexpr uint32_t kNrAvailableMemory = _IOC_NR(AMDKFD_IOC_AVAILABLE_MEMORY);

constexpr uint64_t kPage = 4096;
// kfd_priv.h: mmap offsets of /dev/kfd carry their type in bits 62-63 and the gpu_id in 46-61.
constexpr uint64_t kMmapTypeMmio = 0x0ull << 62;
constexpr int kMmapGpuIdShift = 46;
// A process's doorbell slice on SOC15: KFD_MAX_NUM_OF_QUEUES_PER_PROCESS 8-byte doorbells,
// rounded up to pages (kfd_doorbell_process_slice) = 2 pages.
constexpr uint64_t kDoorbellSlice = 1024 * 8;
// drm_vma_offset_manager: GEM mmap offsets start above the first 4 GiB (DRM_FILE_PAGE_OFFSET_START).
constexpr uint64_t kDrmFirstOffset = 1ull << 32;
constexpr uint64_t kDrmLastOffset = 1ull << 46;

constexpr uint32_t kDomainFlags =
    KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |
    KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;

uint32_t handle_gpu(uint64_t handle) { return static_cast<uint32_t>(handle >> 32); }
uint32_t handle_idr(uint64_t handle) { return static_cast<uint32_t>(handle & 0xffffffffu); }

}  // namespace

std::optional<detail::IoctlTableEntry> detail::memory_ioctl_entry(uint32_t nr) {
  switch (nr) {
    case kNrAlloc:
      return IoctlTableEntry{sizeof(kfd_ioctl_alloc_memory_of_gpu_args), true, true};
    case kNrFree:
      return IoctlTableEntry{sizeof(kfd_ioctl_free_memory_of_gpu_args), true, false};
    case kNrMap:
      return IoctlTableEntry{sizeof(kfd_ioctl_map_memory_to_gpu_args), true, true};
    case kNrUnmap:
      return IoctlTableEntry{sizeof(kfd_ioctl_unmap_memory_from_gpu_args), true, true};
    case kNrAvailableMemory:
      return IoctlTableEntry{sizeof(kfd_ioctl_get_available_memory_args), true, true};
    default:
      return std::nullopt;
  }
}

Outcome KfdDevice::State::memory_ioctl(const CallPtr& call, const ProcessPtr& p) {
  const int pid = call->caller.pid;
  switch (call->nr) {
    case kNrAlloc: {
      auto a = load<kfd_ioctl_alloc_memory_of_gpu_args>(call);
      if (a.size == 0) return Outcome::done(-EINVAL);
      auto* d = p->device(a.gpu_id);
      if (!d) return Outcome::done(-EINVAL);
      uint64_t offset = a.mmap_offset;
      if (a.flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) {
        if (a.size != kDoorbellSlice) return Outcome::done(-EINVAL);
      } else if (a.flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) {
        if (a.size != kPage) return Outcome::done(-EINVAL);
      }
      // amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu: one of the domains, else -EINVAL.
      if (!(a.flags & kDomainFlags)) return Outcome::done(-EINVAL);
      // kfd_bind_process_to_device: no VM yet (no ACQUIRE_VM) -> -ENODEV.
      if (!d->vm_acquired) return Outcome::done(-ENODEV);
      if ((a.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) &&
          d->vram_usage + a.size > profile.vram_bytes)
        return Outcome::done(-ENOMEM);  // amdgpu_amdkfd_reserve_mem_limit
      Bo bo;
      bo.va = a.va_addr;
      bo.size = a.size;
      bo.flags = a.flags;
      if (a.flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) {
        offset = kMmapTypeMmio | (uint64_t{a.gpu_id} << kMmapGpuIdShift);
      } else if (!(a.flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)) {
        // A GEM object of the render node: its fake mmap offset. Each node has an offset space of
        // its own in the kernel; here one counter serves all, never reusing an offset, so that
        // (process, offset) names one buffer wherever it is mapped (kfdsimd keys its shared
        // memory so), and below the /dev/kfd offsets, which start at gpu_id << 46.
        const uint64_t bytes = (a.size + kPage - 1) / kPage * kPage;
        if (next_drm_offset == 0) next_drm_offset = kDrmFirstOffset;
        if (bytes > kDrmLastOffset - next_drm_offset) return Outcome::done(-ENOMEM);
        offset = next_drm_offset;
        next_drm_offset += bytes;
      }
      bo.mmap_offset = offset;
      // idr_alloc(&pdd->alloc_idr, mem, 0, 0): the lowest free id.
      uint32_t idr = 0;
      while (d->bos.count(idr)) ++idr;
      d->bos[idr] = bo;
      if (a.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) d->vram_usage += a.size;
      a.handle = (uint64_t{a.gpu_id} << 32) | idr;
      a.mmap_offset = offset;
      store(call, a);
      return Outcome::done(0);
    }
    case kNrFree: {
      auto a = load<kfd_ioctl_free_memory_of_gpu_args>(call);
      auto* d = p->device(handle_gpu(a.handle));
      if (!d) return Outcome::done(-EINVAL);
      auto it = d->bos.find(handle_idr(a.handle));
      if (it == d->bos.end()) return Outcome::done(-EINVAL);
      // amdgpu_amdkfd_gpuvm_free_memory_of_gpu refuses a buffer still mapped to a GPU.
      if (!it->second.mapped_on.empty()) return Outcome::done(-EBUSY);
      if (it->second.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) d->vram_usage -= it->second.size;
      if (p->signal_page_va && p->signal_page_va == it->second.va) p->signal_page_va = 0;
      const uint64_t freed = it->second.mmap_offset;
      const bool render = !(it->second.flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
                                                KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP));
      d->bos.erase(it);
      if (render && self.on_buffer_freed) self.on_buffer_freed(pid, freed);
      return Outcome::done(0);
    }
    case kNrMap:
    case kNrUnmap: {
      // Both structs have the same layout (handle, device_ids_array_ptr, n_devices, n_success).
      auto a = load<kfd_ioctl_map_memory_to_gpu_args>(call);
      const bool map = call->nr == kNrMap;
      auto* d = p->device(handle_gpu(a.handle));
      if (!d) return Outcome::done(-EINVAL);
      if (a.n_devices == 0 || a.n_success > a.n_devices) return Outcome::done(-EINVAL);
      std::vector<uint32_t> ids(a.n_devices);
      if (!env.read_memory(pid, a.device_ids_array_ptr, ids.data(), ids.size() * sizeof(uint32_t)))
        return Outcome::done(-EFAULT);
      auto it = d->bos.find(handle_idr(a.handle));
      if (it == d->bos.end()) return Outcome::done(-ENOMEM);  // kfd_process_device_translate_handle
      Bo& bo = it->second;
      for (uint32_t i = a.n_success; i < a.n_devices; ++i) {
        auto* peer = p->device(ids[i]);
        if (!peer) {
          store(call, a);
          return Outcome::done(-EINVAL);
        }
        auto on = std::find(bo.mapped_on.begin(), bo.mapped_on.end(), ids[i]);
        if (map) {
          if (on == bo.mapped_on.end()) bo.mapped_on.push_back(ids[i]);
        } else {
          if (on == bo.mapped_on.end()) {  // kfd_mem_is_attached() false
            store(call, a);
            return Outcome::done(-EINVAL);
          }
          bo.mapped_on.erase(on);
        }
        a.n_success = i + 1;
      }
      store(call, a);
      return Outcome::done(0);
    }
    case kNrAvailableMemory: {
      auto a = load<kfd_ioctl_get_available_memory_args>(call);
      auto* d = p->device(a.gpu_id);
      if (!d) return Outcome::done(-EINVAL);
      a.available = profile.vram_bytes - d->vram_usage;
      store(call, a);
      return Outcome::done(0);
    }
  }
  return Outcome::done(-ENOTTY);
}

int KfdDevice::check_render_mmap(int pid, uint32_t render_minor, uint64_t offset,
                                 uint64_t length) const {
  std::lock_guard lock(state_->guard->mutex);
  auto p = state_->find_process(pid);
  if (!p) return -EINVAL;
  for (const auto& g : state_->profile.gpus) {
    if (g.drm_render_minor != render_minor) continue;
    const auto* d = p->device(g.gpu_id);
    if (!d) return -EINVAL;
    for (const auto& [id, bo] : d->bos) {
      if (bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP))
        continue;  // mapped through /dev/kfd, not the render node
      const uint64_t pages = (bo.size + kPage - 1) / kPage * kPage;
      if (bo.mmap_offset == offset) return length <= pages ? 0 : -EINVAL;
    }
  }
  return -EINVAL;
}

uint64_t KfdDevice::vram_used(uint32_t gpu_id) const {
  std::lock_guard lock(state_->guard->mutex);
  uint64_t used = 0;
  for (const auto& [pid, p] : state_->processes)
    if (const auto* d = p->device(gpu_id)) used += d->vram_usage;
  return used;
}

}  // namespace gpreempt::sim
