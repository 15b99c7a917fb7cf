// GPU memory and events as ROCr 5.2's libhsakmt uses them (docs/kfd-interface.md#memory,
// docs/kfd-interface.md#events): handles, mmap offsets and the kernel's errno for each bad input.
// Debian's KFD header supplies the layouts, as for the other pre-1.13 ioctls.
#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include "device_rig.h"

// clang-format off
#include <linux/kfd_ioctl.h>
// clang-format on

namespace gpreempt::sim::testing {
namespace {

constexpr int kPid = 100;
constexpr uint64_t kNsPerMs = 1000000;
constexpr uint32_t kVram = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
constexpr uint32_t kGtt = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;

// A process with its VM acquired on the rig's GPU.
void with_vm(Rig& r) {
  r.spawn(kPid);
  r.open_render(kPid, 7);
  ::kfd_ioctl_acquire_vm_args vm{7, r.gpu()};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), 0);
}

::kfd_ioctl_alloc_memory_of_gpu_args alloc_args(Rig& r, uint64_t va, uint64_t size,
                                                uint32_t flags) {
  ::kfd_ioctl_alloc_memory_of_gpu_args a{};
  a.va_addr = va;
  a.size = size;
  a.gpu_id = r.gpu();
  a.flags = flags;
  return a;
}

TEST(SimDeviceMemory, AllocNeedsSizeGpuDomainAndVm) {
  Rig r;
  r.spawn(kPid);
  auto a = alloc_args(r, 0x200000, 0x1000, kVram);
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -ENODEV) << "no ACQUIRE_VM";
  r.open_render(kPid, 7);
  ::kfd_ioctl_acquire_vm_args vm{7, r.gpu()};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), 0);
  a.size = 0;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -EINVAL);
  a = alloc_args(r, 0x200000, 0x1000, kVram);
  a.gpu_id = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -EINVAL);
  a = alloc_args(r, 0x200000, 0x1000, KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE);
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -EINVAL) << "no domain";
  a = alloc_args(r, 0x200000, 0x2000, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -EINVAL) << "MMIO is a page";
  a = alloc_args(r, 0x200000, 0x1000, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL);
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -EINVAL)
      << "doorbells are the 2-page process slice";
  a = alloc_args(r, 0x200000, r.profile_.vram_bytes + 0x1000, kVram);
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), -ENOMEM);
}

TEST(SimDeviceMemory, AcquireVmAgainTakesOnlyTheSameFile) {
  // kfd_ioctl_acquire_vm: pdd->drm_file == drm_file ? 0 : -EBUSY. fd 7 and its dup 9 are one
  // file; fd 8 is another open of the same render node.
  Rig r;
  r.spawn(kPid);
  r.open_render(kPid, 7);
  r.open_render(kPid, 8);
  r.host.fds[{kPid, 9}] = r.host.fds.at({kPid, 7});
  auto acquire = [&](uint32_t fd, uint32_t gpu) {
    ::kfd_ioctl_acquire_vm_args vm{fd, gpu};
    return r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm);
  };
  EXPECT_EQ(acquire(99, r.gpu()), -EINVAL) << "not an open file";
  EXPECT_EQ(acquire(7, 12345), -EINVAL) << "no such GPU";
  EXPECT_EQ(r.host.live_refs.size(), 0u) << "a failed call keeps no file";
  EXPECT_EQ(acquire(7, r.gpu()), 0);
  EXPECT_EQ(acquire(7, r.gpu()), 0) << "the same file again";
  EXPECT_EQ(acquire(9, r.gpu()), 0) << "a dup is the same file";
  EXPECT_EQ(acquire(8, r.gpu()), -EBUSY) << "another file of the same node";
  EXPECT_EQ(r.host.live_refs.size(), 1u) << "the device holds the first file, and only it";
  r.host.remove_process(kPid);
  r.dev->process_exited(kPid);
  EXPECT_EQ(r.host.live_refs.size(), 0u) << "released with the process";
}

TEST(SimDeviceMemory, AcquireVmTakesOnlyAnAmdgpuDrmFileWhoseVmIsFree) {
  // kfd_process_device_init_vm: amdgpu_file_to_fpriv refuses a file that is not amdgpu's
  // (-EINVAL); amdgpu_amdkfd_gpuvm_acquire_process_vm refuses a VM that is already a compute VM
  // (-EINVAL). Neither asks which GPU the file belongs to.
  Rig r(DeviceOptions{}, "mi308x", 3);
  r.spawn(kPid);
  r.host.open_file(kPid, 5);  // a /dev/null, a pipe: any file that is not a render node
  r.open_render(kPid, 7, 0);
  r.open_render(kPid, 8, 1);
  auto acquire = [&](uint32_t fd, std::size_t gpu) {
    ::kfd_ioctl_acquire_vm_args vm{fd, r.profile_.gpus.at(gpu).gpu_id};
    return r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm);
  };
  EXPECT_EQ(acquire(5, 0), -EINVAL) << "not an amdgpu DRM file";
  EXPECT_EQ(r.host.live_refs.size(), 0u) << "a refused file is not kept";
  EXPECT_EQ(acquire(7, 0), 0);
  EXPECT_EQ(acquire(7, 1), -EINVAL) << "its VM is a compute VM already (GPU 0 took it)";
  EXPECT_EQ(acquire(8, 2), 0) << "another GPU's render node: the kernel does not check";
  EXPECT_EQ(acquire(5, 0), -EBUSY) << "once GPU 0 has a VM, the same-file check comes first";
  EXPECT_EQ(r.host.live_refs.size(), 2u);
}

TEST(SimDeviceMemory, AcquireVmOfAFileAnotherProcessTookIsRefused) {
  // The VM belongs to the DRM file: a child that inherited the parent's render-node descriptor
  // finds its VM a compute VM already.
  Rig r;
  constexpr int kChild = 101;
  r.spawn(kPid);
  r.spawn(kChild);
  const int file = r.open_render(kPid, 7);
  r.host.fds[{kChild, 7}] = file;
  ::kfd_ioctl_acquire_vm_args vm{7, r.gpu()};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), 0);
  EXPECT_EQ(r.call({kChild, kChild}, AMDKFD_IOC_ACQUIRE_VM, vm), -EINVAL);
  r.open_render(kChild, 8);
  vm.drm_fd = 8;
  EXPECT_EQ(r.call({kChild, kChild}, AMDKFD_IOC_ACQUIRE_VM, vm), 0) << "its own open is free";
}

TEST(SimDeviceMemory, HandlesAndMmapOffsets) {
  Rig r;
  with_vm(r);
  auto v = alloc_args(r, 0x200000, 0x3000, kVram);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, v), 0);
  EXPECT_EQ(v.handle, uint64_t{r.gpu()} << 32) << "gpu_id high, first idr 0 low";
  EXPECT_EQ(v.mmap_offset, 1ull << 32) << "the first GEM offset of the render node";
  auto g = alloc_args(r, 0x400000, 0x1000, kGtt);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, g), 0);
  EXPECT_EQ(g.handle, (uint64_t{r.gpu()} << 32) | 1);
  EXPECT_EQ(g.mmap_offset, (1ull << 32) + 0x3000);
  auto m = alloc_args(r, 0x500000, 0x1000, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, m), 0);
  EXPECT_EQ(m.mmap_offset, uint64_t{r.gpu()} << 46) << "KFD_MMAP_TYPE_MMIO | KFD_MMAP_GPU_ID";
  std::vector<std::pair<int, uint64_t>> freed;
  r.dev->on_buffer_freed = [&](int pid, uint64_t off) { freed.emplace_back(pid, off); };
  ::kfd_ioctl_free_memory_of_gpu_args fm{m.handle};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, fm), 0);
  EXPECT_TRUE(freed.empty()) << "the MMIO page is not a render-node buffer";

  ::kfd_ioctl_get_available_memory_args avail{0, r.gpu(), 0};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_AVAILABLE_MEMORY, avail), 0);
  EXPECT_EQ(avail.available, r.profile_.vram_bytes - 0x3000) << "only VRAM counts";
  avail.gpu_id = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_AVAILABLE_MEMORY, avail), -EINVAL);

  // A freed id is handed out again (idr_alloc takes the lowest free one).
  ::kfd_ioctl_free_memory_of_gpu_args f{v.handle};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, f), 0);
  EXPECT_EQ(freed, (std::vector<std::pair<int, uint64_t>>{{kPid, v.mmap_offset}}))
      << "the transport may drop the buffer's shared memory";
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, f), -EINVAL) << "freed twice";
  auto again = alloc_args(r, 0x600000, 0x1000, kGtt);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, again), 0);
  EXPECT_EQ(again.handle, uint64_t{r.gpu()} << 32);
  f.handle = 1ull << 32 | 0;  // gpu_id 1 does not exist
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, f), -EINVAL);
}

TEST(SimDeviceMemory, MapAndUnmapCountSuccessesAndRefuseBadInput) {
  Rig r;
  with_vm(r);
  auto g = alloc_args(r, 0x200000, 0x1000, kGtt);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, g), 0);
  uint64_t ids = r.host.alloc(kPid, 8);
  r.host.put<uint32_t>(kPid, ids, r.gpu());
  r.host.put<uint32_t>(kPid, ids + 4, 0x1234);  // no such GPU

  ::kfd_ioctl_map_memory_to_gpu_args m{g.handle, ids, 0, 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_MAP_MEMORY_TO_GPU, m), -EINVAL) << "no devices";
  m.n_devices = 1;
  m.n_success = 2;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_MAP_MEMORY_TO_GPU, m), -EINVAL) << "n_success > n";
  m.n_success = 0;
  m.device_ids_array_ptr = 0x10;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_MAP_MEMORY_TO_GPU, m), -EFAULT);
  m.device_ids_array_ptr = ids;
  m.handle = g.handle + 5;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_MAP_MEMORY_TO_GPU, m), -ENOMEM)
      << "an unknown handle of a known GPU";
  m.handle = g.handle;
  m.n_devices = 2;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_MAP_MEMORY_TO_GPU, m), -EINVAL) << "peer 0x1234";
  EXPECT_EQ(m.n_success, 1u) << "the first device was mapped before the bad one";

  ::kfd_ioctl_free_memory_of_gpu_args f{g.handle};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, f), -EBUSY) << "still mapped";

  ::kfd_ioctl_unmap_memory_from_gpu_args u{g.handle, ids, 1, 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, u), 0);
  EXPECT_EQ(u.n_success, 1u);
  u.n_success = 0;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, u), -EINVAL) << "not mapped";
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, f), 0);
}

TEST(SimDeviceMemory, RenderOffsetsAreUniqueAcrossGpus) {
  // kfdsimd keys a process's shared memory by offset: two GPUs' buffers must not share one.
  Rig r({}, "mi300x", 2);
  with_vm(r);
  r.open_render(kPid, 8);
  ::kfd_ioctl_acquire_vm_args vm{8, r.profile_.gpus[1].gpu_id};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), 0);
  auto a = alloc_args(r, 0x200000, 0x1000, kGtt);
  auto b = alloc_args(r, 0x400000, 0x1000, kGtt);
  b.gpu_id = r.profile_.gpus[1].gpu_id;
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), 0);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, b), 0);
  EXPECT_NE(a.mmap_offset, b.mmap_offset);
  EXPECT_EQ(r.dev->check_render_mmap(kPid, r.profile_.gpus[1].drm_render_minor, b.mmap_offset,
                                     0x1000), 0);
  EXPECT_EQ(r.dev->check_render_mmap(kPid, r.profile_.gpus[1].drm_render_minor, a.mmap_offset,
                                     0x1000), -EINVAL) << "GPU 0's buffer on GPU 1's node";
}

TEST(SimDeviceMemory, RenderNodeMapsOnlyTheProcesssBuffers) {
  Rig r;
  with_vm(r);
  const uint32_t minor = r.profile_.gpus[0].drm_render_minor;
  auto g = alloc_args(r, 0x200000, 0x1800, kGtt);  // 1.5 pages: mappable as 2
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, g), 0);
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor, g.mmap_offset, 0x2000), 0);
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor, g.mmap_offset, 0x1000), 0) << "a part";
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor, g.mmap_offset, 0x3000), -EINVAL) << "beyond";
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor, g.mmap_offset + 0x1000, 0x1000), -EINVAL)
      << "not the start of an object";
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor + 1, g.mmap_offset, 0x1000), -EINVAL)
      << "another node";
  EXPECT_EQ(r.dev->check_render_mmap(kPid + 1, minor, g.mmap_offset, 0x1000), -EINVAL)
      << "another process";
  auto m = alloc_args(r, 0x400000, 0x1000, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, m), 0);
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor, m.mmap_offset, 0x1000), -EINVAL)
      << "the MMIO page is mapped through /dev/kfd";
  ::kfd_ioctl_free_memory_of_gpu_args f{g.handle};
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_FREE_MEMORY_OF_GPU, f), 0);
  EXPECT_EQ(r.dev->check_render_mmap(kPid, minor, g.mmap_offset, 0x1000), -EINVAL) << "freed";
}

TEST(SimDeviceMemory, ClockCountersTrapHandlerScratch) {
  Rig r;
  r.spawn(kPid);
  ::kfd_ioctl_get_clock_counters_args c{};
  c.gpu_id = r.gpu();
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_CLOCK_COUNTERS, c), 0);
  EXPECT_EQ(c.system_clock_freq, 1000000000ull);
  EXPECT_GT(c.cpu_clock_counter, 0u);
  EXPECT_GT(c.gpu_clock_counter, 0u);
  c.gpu_id = 1;
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_CLOCK_COUNTERS, c), 0) << "not an error";
  EXPECT_EQ(c.gpu_clock_counter, 0u) << "a node without a GPU counter";

  ::kfd_ioctl_set_trap_handler_args t{0x1000, 0x2000, r.gpu(), 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_TRAP_HANDLER, t), 0);
  t.gpu_id = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_TRAP_HANDLER, t), -EINVAL);
  ::kfd_ioctl_set_scratch_backing_va_args s{0x10000, r.gpu(), 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, s), 0);
  s.gpu_id = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, s), -EINVAL);
}

TEST(SimDeviceMemory, TileConfigCopiesAtMostTheArraysAndFaults) {
  Rig r({}, "mi210", 1);
  r.spawn(kPid);
  uint64_t tiles = r.host.alloc(kPid, 64 * 4), macro = r.host.alloc(kPid, 64 * 4);
  r.host.put<uint32_t>(kPid, tiles, 0xdeadbeef);
  ::kfd_ioctl_get_tile_config_args t{};
  t.tile_config_ptr = tiles;
  t.macro_tile_config_ptr = macro;
  t.num_tile_configs = 64;
  t.num_macro_tile_configs = 64;
  t.gpu_id = r.gpu();
  ASSERT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_TILE_CONFIG, t), 0);
  EXPECT_EQ(t.num_tile_configs, 32u);
  EXPECT_EQ(t.num_macro_tile_configs, 16u);
  EXPECT_EQ(t.gb_addr_config, 0x22014042u);
  EXPECT_EQ(r.host.get<uint32_t>(kPid, tiles), 0u) << "GFX9 leaves the tile modes 0";
  t.gpu_id = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_TILE_CONFIG, t), -EINVAL);
  t.gpu_id = r.gpu();
  t.tile_config_ptr = 0x10;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_TILE_CONFIG, t), -EFAULT);
  EXPECT_EQ(t.num_tile_configs, 0u);
}

// ---- events ---------------------------------------------------------------------------------

struct EventRig {
  Rig r;
  uint64_t page = 0;  // the event page's user address
  explicit EventRig(DeviceOptions options = {}) : r(options) {
    with_vm(r);
    page = r.host.alloc(kPid, KFD_SIGNAL_EVENT_LIMIT * 8);
    auto a = alloc_args(r, page, KFD_SIGNAL_EVENT_LIMIT * 8, kGtt);
    EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, a), 0);
    handle = a.handle;
  }
  uint64_t handle = 0;
  ::kfd_ioctl_create_event_args create(uint32_t type, uint64_t page_handle = 0) {
    ::kfd_ioctl_create_event_args e{};
    e.event_page_offset = page_handle;
    e.event_type = type;
    e.auto_reset = 1;
    EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, e), 0);
    return e;
  }
  uint64_t last_data = 0;  // the kfd_event_data of the last wait
  long wait(uint32_t id, uint32_t timeout, uint32_t& result, uint64_t last_age = 0) {
    uint64_t data = r.host.alloc(kPid, sizeof(::kfd_event_data));
    last_data = data;
    ::kfd_event_data d{};
    d.event_id = id;
    r.host.put(kPid, data, d);
    r.host.put<uint64_t>(kPid, data, last_age);  // signal_event_data.last_event_age (KFD 1.14)
    ::kfd_ioctl_wait_events_args w{data, 1, 0, timeout, 99};
    auto res = r.raw({kPid, kPid}, AMDKFD_IOC_WAIT_EVENTS, w);
    result = w.wait_result;
    return res.blocked ? 1 : res.ret;
  }
};

// A wait on `ids` that must go to sleep: its token (the result then comes through on_complete).
struct SleepingWait {
  CallToken token = 0;
  uint64_t data = 0;  // the kfd_event_data array
  IoctlResult res;
};
SleepingWait start_wait(EventRig& e, std::vector<uint32_t> ids, bool all, uint32_t timeout) {
  SleepingWait w;
  w.data = e.r.host.alloc(kPid, ids.size() * sizeof(::kfd_event_data));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ::kfd_event_data d{};
    d.event_id = ids[i];
    e.r.host.put(kPid, w.data + i * sizeof d, d);
  }
  ::kfd_ioctl_wait_events_args a{w.data, static_cast<uint32_t>(ids.size()), all ? 1u : 0u, timeout, 99};
  w.res = e.r.raw({kPid, kPid}, AMDKFD_IOC_WAIT_EVENTS, a);
  w.token = e.r.last_token;
  EXPECT_TRUE(w.res.blocked) << "the wait did not sleep";
  return w;
}
// The completed wait's return value and arguments (nullopt while it sleeps).
std::optional<std::pair<long, ::kfd_ioctl_wait_events_args>> result_of(EventRig& e, CallToken t) {
  auto it = e.r.completions.find(t);
  if (it == e.r.completions.end()) return std::nullopt;
  ::kfd_ioctl_wait_events_args a{};
  std::memcpy(&a, it->second.args.data(), sizeof a);
  return std::make_pair(it->second.ret, a);
}

TEST(SimDeviceKfdEvents, EventPageSlotsAndIds) {
  EventRig e;
  // kfd_event_init_process reserves id 0: the first signal event is 1.
  auto s1 = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  EXPECT_EQ(s1.event_id, 1u);
  EXPECT_EQ(s1.event_slot_index, 1u);
  EXPECT_EQ(s1.event_trigger_data, 1u);
  EXPECT_EQ(s1.event_page_offset, 0x2ull << 62) << "KFD_MMAP_TYPE_EVENTS";
  EXPECT_EQ(e.r.host.get<uint64_t>(kPid, e.page + 8), ~0ull) << "slots start unsignaled";
  auto s2 = e.create(KFD_IOC_EVENT_SIGNAL);
  EXPECT_EQ(s2.event_id, 2u);
  auto hw = e.create(KFD_IOC_EVENT_HW_EXCEPTION);
  EXPECT_EQ(hw.event_id, 0x40000000u) << "non-signal events take the upper half";

  ::kfd_ioctl_create_event_args twice{};
  twice.event_page_offset = e.handle;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, twice), -EINVAL) << "page already set";
  ::kfd_ioctl_set_event_args set{hw.event_id, 0};
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), -EINVAL) << "not a signal event";
  ::kfd_ioctl_destroy_event_args d{77, 0};
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_DESTROY_EVENT, d), -EINVAL);
  d.event_id = 0;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_DESTROY_EVENT, d), -EINVAL) << "id 0 is no event";
  d.event_id = s1.event_id;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_DESTROY_EVENT, d), 0);
  EXPECT_EQ(e.create(KFD_IOC_EVENT_SIGNAL).event_id, 1u) << "the freed slot is reused";
}

TEST(SimDeviceKfdEvents, EventAgeWakesEveryWaiterOfAnAutoResetEvent) {
  // Two threads wait on one auto-reset event (ROCr 6.x: a queue's destructor and the async
  // handler); the first takes the set, the second still sees a newer age than the one it knew.
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  uint32_t result = 0;
  ASSERT_EQ(e.wait(ev.event_id, 0, result, 1), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT) << "age 1 = the creation, nothing new";
  ::kfd_ioctl_set_event_args set{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  ASSERT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE) << "the first waiter takes the auto-reset";
  ASSERT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT) << "without an age: gone";
  ASSERT_EQ(e.wait(ev.event_id, 0, result, 1), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE) << "with the age it knew: activated";
  EXPECT_EQ(e.r.host.get<uint64_t>(kPid, e.last_data), 2u) << "the new age is copied back";
  ASSERT_EQ(e.wait(ev.event_id, 0, result, 2), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT);
  // The GPU's slot write sets the event too, and ages it.
  e.r.host.put<uint64_t>(kPid, e.page + 8 * ev.event_slot_index, ev.event_id);
  ASSERT_EQ(e.wait(ev.event_id, 0, result, 2), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE);
  EXPECT_EQ(e.r.host.get<uint64_t>(kPid, e.last_data), 3u);
}

TEST(SimDeviceKfdEvents, CreateEventWithAnUnknownPageHandle) {
  EventRig e;
  ::kfd_ioctl_create_event_args c{};
  c.event_page_offset = e.handle + 9;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, c), -EINVAL);
  c.event_page_offset = 1ull << 32;  // gpu_id 1
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, c), -EINVAL);
}

TEST(SimDeviceKfdEvents, WaitSetResetAndTheGpuWrittenSlot) {
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  uint32_t result = 0;
  EXPECT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT);
  EXPECT_EQ(e.wait(12345, 0, result), -EINVAL);

  ::kfd_ioctl_set_event_args set{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  EXPECT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE);
  EXPECT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT) << "auto-reset: the first waiter took it";

  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  ::kfd_ioctl_reset_event_args reset{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_RESET_EVENT, reset), 0);
  EXPECT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT);

  // The GPU signals by writing the slot (then interrupting): seen, and the slot acknowledged.
  e.r.host.put<uint64_t>(kPid, e.page + 8 * ev.event_slot_index, ev.event_id);
  EXPECT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE);
  EXPECT_EQ(e.r.host.get<uint64_t>(kPid, e.page + 8 * ev.event_slot_index), ~0ull);

  // A wait with a timeout parks until SET_EVENT.
  EXPECT_EQ(e.wait(ev.event_id, 1000, result), 1) << "blocked";
  const CallToken token = e.r.last_token;
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  ASSERT_TRUE(e.r.completions.count(token));
  EXPECT_EQ(e.r.completions[token].ret, 0);
}

TEST(SimDeviceKfdEvents, ASleepingWaitWakesOnASetFromAnotherThread) {
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  auto w = start_wait(e, {ev.event_id}, false, 0xffffffffu);
  EXPECT_EQ(w.res.timeout_ms, 0u) << "infinite: no deadline for the transport";
  ASSERT_FALSE(result_of(e, w.token));
  ::kfd_ioctl_set_event_args set{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  auto got = result_of(e, w.token);
  ASSERT_TRUE(got) << "the set did not wake the sleeper";
  EXPECT_EQ(got->first, 0);
  EXPECT_EQ(got->second.wait_result, KFD_IOC_WAIT_RESULT_COMPLETE);
  uint32_t result = 0;
  ASSERT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT) << "the sleeper took the auto-reset event";
}

TEST(SimDeviceKfdEvents, TheGpusInterruptWakesASleepingWait) {
  // Another process (the GPU) writes the slot; the interrupt, not the write, wakes the waiter.
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  auto w = start_wait(e, {ev.event_id}, false, 60000);
  EXPECT_EQ(w.res.timeout_ms, 60000u);
  e.r.host.put<uint64_t>(kPid, e.page + 8 * ev.event_slot_index, ev.event_id);
  ASSERT_FALSE(result_of(e, w.token)) << "no interrupt yet";
  e.r.dev->event_interrupt(kPid + 1);  // another process's interrupt
  ASSERT_FALSE(result_of(e, w.token));
  e.r.dev->event_interrupt(kPid);
  auto got = result_of(e, w.token);
  ASSERT_TRUE(got) << "the interrupt did not wake the sleeper";
  EXPECT_EQ(got->first, 0);
  EXPECT_EQ(got->second.wait_result, KFD_IOC_WAIT_RESULT_COMPLETE);
  EXPECT_EQ(e.r.host.get<uint64_t>(kPid, e.page + 8 * ev.event_slot_index), ~0ull) << "acknowledged";
}

TEST(SimDeviceKfdEvents, TheTimeoutEndsASleepingWait) {
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  auto w = start_wait(e, {ev.event_id}, false, 0x80000000u);
  EXPECT_EQ(w.res.timeout_ms, 0x7fffffffu) << "finite, at most 2^31-1 ms";
  e.r.dev->time_out(w.token);
  auto got = result_of(e, w.token);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->first, 0);
  EXPECT_EQ(got->second.wait_result, KFD_IOC_WAIT_RESULT_TIMEOUT);
  // A set after the timeout is kept for the next waiter; a late time_out changes nothing.
  ::kfd_ioctl_set_event_args set{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  e.r.dev->time_out(w.token);
  uint32_t result = 0;
  ASSERT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE);
}

TEST(SimDeviceKfdEvents, AllNeedsEveryEventAnyOne) {
  EventRig e;
  auto a = e.create(KFD_IOC_EVENT_SIGNAL, e.handle), b = e.create(KFD_IOC_EVENT_SIGNAL);
  ::kfd_ioctl_set_event_args set_a{a.event_id, 0}, set_b{b.event_id, 0};
  auto all = start_wait(e, {a.event_id, b.event_id}, true, 1000);
  auto any = start_wait(e, {a.event_id, b.event_id}, false, 1000);
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set_a), 0);
  ASSERT_TRUE(result_of(e, any.token)) << "any: one event is enough";
  EXPECT_EQ(result_of(e, any.token)->second.wait_result, KFD_IOC_WAIT_RESULT_COMPLETE);
  ASSERT_FALSE(result_of(e, all.token)) << "all: one of two is not enough";
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set_b), 0);
  ASSERT_TRUE(result_of(e, all.token));
  EXPECT_EQ(result_of(e, all.token)->second.wait_result, KFD_IOC_WAIT_RESULT_COMPLETE);
}

TEST(SimDeviceKfdEvents, OneSetWakesEverySleeperOfAnAutoResetEvent) {
  // set_event activates every waiter queued on the event and, having woken some, leaves an
  // auto-reset event unsignaled.
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  auto w1 = start_wait(e, {ev.event_id}, false, 1000), w2 = start_wait(e, {ev.event_id}, false, 1000);
  ::kfd_ioctl_set_event_args set{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set), 0);
  EXPECT_TRUE(result_of(e, w1.token));
  EXPECT_TRUE(result_of(e, w2.token));
  uint32_t result = 0;
  ASSERT_EQ(e.wait(ev.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_TIMEOUT);
}

TEST(SimDeviceKfdEvents, ASignalEndsASleepingWaitAndGivesBackWhatItTook) {
  EventRig e;
  auto a = e.create(KFD_IOC_EVENT_SIGNAL, e.handle), b = e.create(KFD_IOC_EVENT_SIGNAL);
  ::kfd_ioctl_set_event_args set_a{a.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_SET_EVENT, set_a), 0);
  // Waiting for both takes the auto-reset a at once, then sleeps for b.
  auto w = start_wait(e, {a.event_id, b.event_id}, true, 1000);
  EXPECT_FALSE(e.r.dev->interrupt(w.token + 100, 0, 0)) << "no such sleeping call";
  EXPECT_TRUE(e.r.dev->interrupt(w.token, 0, 600 * kNsPerMs));
  auto got = result_of(e, w.token);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->first, -EINTR);
  EXPECT_EQ(got->second.wait_result, KFD_IOC_WAIT_RESULT_FAIL);
  EXPECT_EQ(got->second.timeout, 400u) << "the remaining timeout is copied back";
  uint32_t result = 0;
  ASSERT_EQ(e.wait(a.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE) << "free_waiters' undo: a is set again";
  EXPECT_FALSE(e.r.dev->interrupt(w.token, 0, 0)) << "already answered";
}

// The timeout an interrupted wait writes back, for a wait of `timeout` ms that slept from
// `since_ns` to `now_ns` on a kernel of `hz`.
uint32_t timeout_written_back(uint32_t hz, uint32_t timeout, uint64_t since_ns, uint64_t now_ns) {
  DeviceOptions o;
  o.config_hz = hz;
  EventRig e(o);
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  auto w = start_wait(e, {ev.event_id}, false, timeout);
  EXPECT_TRUE(e.r.dev->interrupt(w.token, since_ns, now_ns));
  auto got = result_of(e, w.token);
  EXPECT_TRUE(got);
  return got ? got->second.timeout : 0;
}

TEST(SimDeviceKfdEvents, AnInterruptedWaitWritesBackTheJiffiesLeft) {
  // kfd_wait_on_events: timeout = msecs_to_jiffies(ms) + 1 jiffies, schedule_timeout leaves what
  // was not slept, and a signal writes back jiffies_to_msecs(left - 1): multiples of a jiffy,
  // counted by the ticks passed, not by the time.
  constexpr uint64_t kMs = kNsPerMs;
  // HZ 250 (4 ms a jiffy): 100 ms are 25 + 1 jiffies; 0.2 ms across a tick cost a whole jiffy.
  EXPECT_EQ(timeout_written_back(250, 100, 3900000, 4100000), 96u);
  EXPECT_EQ(timeout_written_back(250, 100, 100000, 3900000), 100u) << "no tick passed";
  // 5 ms round up to 2 jiffies: a wait interrupted at once writes back more than it was given.
  EXPECT_EQ(timeout_written_back(250, 5, 4 * kMs, 4 * kMs), 8u);
  EXPECT_EQ(timeout_written_back(250, 100, 0, 104 * kMs), 0u) << "the extra jiffy slept too";
  EXPECT_EQ(timeout_written_back(250, 100, 0, 200 * kMs), 0u) << "never below 0";
  // HZ 1000: a jiffy is a millisecond.
  EXPECT_EQ(timeout_written_back(1000, 100, 500000, 700000), 100u);
  EXPECT_EQ(timeout_written_back(1000, 100, 500000, 41 * kMs + 500000), 59u);
  // Timeouts above 2^31-1 ms are finite (user_timeout_to_jiffies clamps them).
  EXPECT_EQ(timeout_written_back(1000, 0xfffffffeu, 0, 0), 0x7fffffffu);
}

TEST(SimDeviceKfdEvents, WithoutAPageTheKernelAllocatesOneTheProcessMaps) {
  // kfd_event_create -> allocate_event_notification_slot: no page yet, the kernel allocates
  // KFD_SIGNAL_EVENT_LIMIT unsignaled slots and lets 256 of them be used until the process maps
  // more (kfd_event_mmap sets signal_mapped_size); a page given afterwards is refused.
  constexpr uint64_t kEvents = 0x2ull << 62;  // KFD_MMAP_TYPE_EVENTS
  EventRig e;
  std::vector<uint64_t> kernel(KFD_SIGNAL_EVENT_LIMIT, 0);
  std::vector<std::pair<int, uint64_t>> asked;
  e.r.dev->on_kernel_memory = [&](int pid, uint64_t offset, std::size_t bytes) -> void* {
    asked.emplace_back(pid, offset);
    EXPECT_EQ(bytes, kernel.size() * 8);
    return kernel.data();
  };
  EXPECT_EQ(e.r.dev->check_kfd_mmap(kPid, kEvents, 4096), -EINVAL) << "no page to map yet";
  auto other = e.create(KFD_IOC_EVENT_HW_EXCEPTION);
  EXPECT_TRUE(asked.empty()) << "only a signal event needs a slot";
  auto first = e.create(KFD_IOC_EVENT_SIGNAL);
  ASSERT_EQ(asked, (std::vector<std::pair<int, uint64_t>>{{kPid, kEvents}}));
  EXPECT_EQ(first.event_page_offset, kEvents);
  EXPECT_TRUE(std::all_of(kernel.begin(), kernel.end(), [](uint64_t v) { return v == ~0ull; }))
      << "every slot unsignaled";
  ::kfd_ioctl_create_event_args late{};
  late.event_page_offset = e.handle;
  late.event_type = KFD_IOC_EVENT_SIGNAL;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, late), -EINVAL) << "page already set";
  // Slot 0 is the reserved id's: 256 slots hold 255 events.
  EXPECT_EQ(first.event_id, 1u);
  for (uint32_t i = 2; i < 256; ++i) e.create(KFD_IOC_EVENT_SIGNAL);
  ::kfd_ioctl_create_event_args more{};
  more.event_type = KFD_IOC_EVENT_SIGNAL;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, more), -ENOSPC) << "256 slots, 255 events";
  EXPECT_EQ(e.r.dev->check_kfd_mmap(kPid, kEvents, 36864), -EINVAL) << "beyond the page";
  EXPECT_EQ(e.r.dev->check_kfd_mmap(kPid, kEvents, 32768), 0);
  EXPECT_EQ(e.create(KFD_IOC_EVENT_SIGNAL).event_id, 256u) << "the mapped slots are usable";
  // The GPU writes the slot in the process's mapping of the page, then interrupts.
  kernel[first.event_slot_index] = first.event_id;
  e.r.dev->event_interrupt(kPid);
  uint32_t result = 0;
  ASSERT_EQ(e.wait(first.event_id, 0, result), 0);
  EXPECT_EQ(result, KFD_IOC_WAIT_RESULT_COMPLETE);
  EXPECT_EQ(kernel[first.event_slot_index], ~0ull) << "acknowledged";
  (void)other;
}

TEST(SimDeviceKfdEvents, TheKernelPageNeedsMemory) {
  // allocate_signal_page failing: -ENOMEM, and no page is set.
  EventRig e;
  e.r.dev->on_kernel_memory = [](int, uint64_t, std::size_t) -> void* { return nullptr; };
  ::kfd_ioctl_create_event_args c{};
  c.event_type = KFD_IOC_EVENT_SIGNAL;
  EXPECT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_CREATE_EVENT, c), -ENOMEM);
  EXPECT_EQ(e.create(KFD_IOC_EVENT_SIGNAL, e.handle).event_id, 1u) << "a BO can still be the page";
  EXPECT_EQ(e.r.dev->check_kfd_mmap(kPid, 0x2ull << 62, 4096), -EINVAL)
      << "the BO is mapped through the render node, not as the kernel's page";
}

TEST(SimDeviceKfdEvents, DestroyingTheEventFailsItsSleeperWithEio) {
  EventRig e;
  auto ev = e.create(KFD_IOC_EVENT_SIGNAL, e.handle);
  auto w = start_wait(e, {ev.event_id}, false, 0xffffffffu);
  ::kfd_ioctl_destroy_event_args d{ev.event_id, 0};
  ASSERT_EQ(e.r.call({kPid, kPid}, AMDKFD_IOC_DESTROY_EVENT, d), 0);
  auto got = result_of(e, w.token);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->first, -EIO);
  EXPECT_EQ(got->second.wait_result, KFD_IOC_WAIT_RESULT_FAIL);
}

}  // namespace
}  // namespace gpreempt::sim::testing
