#include "sim/shim/drm_render.h"

#include <fcntl.h>
#include <libdrm/amdgpu_drm.h>
#include <libdrm/drm.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "sim/protocol/machine_paths.h"
#include "sim/protocol/messages.h"
#include "sim/shim/daemon_client.h"
#include "sim/shim/debug_trace.h"
#include "sim/shim/fd_table.h"
#include "sim/shim/guest_paths.h"
#include "sim/shim/kfd_file.h"
#include "sim/shim/real_libc.h"
#include "sim/shim/user_copy.h"

namespace gpreempt::sim::shim {
namespace {

constexpr unsigned kDrmMajor = 226;  // fixed: DRM_MAJOR
constexpr int kFirstRenderMinor = 128;
constexpr int kRenderMinors = 64;
// amdgpu KMS interface version the node reports (KMS_DRIVER_MAJOR/MINOR of Linux 6.8's amdgpu);
// libdrm_amdgpu only requires major 3.
constexpr int kKmsMajor = 3;
constexpr int kKmsMinor = 57;

struct NodeCache {
  std::mutex mutex;
  std::array<bool, kRenderMinors> asked{};
  std::array<std::optional<protocol::DrmDeviceInfo>, kRenderMinors> info{};
};
NodeCache& cache() {
  static auto* c = new NodeCache;  // never destroyed: exit handlers may still ask (daemon_client.cpp paths())
  return *c;
}

std::optional<protocol::DrmDeviceInfo> node_info(int minor) {
  if (minor < kFirstRenderMinor || minor >= kFirstRenderMinor + kRenderMinors) return std::nullopt;
  int i = minor - kFirstRenderMinor;
  auto& c = cache();
  {
    std::lock_guard lock(c.mutex);
    if (c.asked[i]) return c.info[i];
  }
  auto r = call(protocol::Op::kDrmDevice, static_cast<uint64_t>(minor), {});
  if (r.error) return std::nullopt;  // no daemon: not ours, and ask again next time
  std::optional<protocol::DrmDeviceInfo> info;
  if (r.reply.ret == 0) info = protocol::decode_drm_device(r.reply.payload);
  std::lock_guard lock(c.mutex);
  c.asked[i] = true;
  c.info[i] = info;
  return info;
}

int fail(int e) {
  errno = e;
  return -1;
}

// drm_version: each string is copied up to the caller's buffer length; the lengths come back as
// the full string lengths (drm_copy_field).
int drm_version(void* arg) {
  drm_version_t v;
  if (!copy_in(&v, arg, sizeof v)) return fail(EFAULT);
  auto field = [](const char* value, __kernel_size_t& len, char* user) {
    std::size_t n = std::strlen(value);
    std::size_t copy = len < n ? len : n;
    len = n;
    return !copy || !user || copy_out(user, value, copy);
  };
  v.version_major = kKmsMajor;
  v.version_minor = kKmsMinor;
  v.version_patchlevel = 0;
  if (!field("amdgpu", v.name_len, v.name) || !field("20150101", v.date_len, v.date) ||
      !field("AMD GPU", v.desc_len, v.desc))
    return fail(EFAULT);
  return copy_out(arg, &v, sizeof v) ? 0 : fail(EFAULT);
}

drm_amdgpu_info_device dev_info(const protocol::DrmDeviceInfo& d) {
  drm_amdgpu_info_device i{};
  i.device_id = d.device_id;
  i.chip_rev = d.revision_id;
  i.external_rev = d.revision_id;
  i.pci_rev = d.revision_id;
  i.family = d.gfx_target_version / 10000 == 9 ? AMDGPU_FAMILY_AI : 0;
  i.num_shader_engines = d.num_shader_engines;
  i.num_shader_arrays_per_engine = d.shader_arrays_per_engine;
  i.gpu_counter_freq = 100000;  // kHz: the 100 MHz GPU timestamp counter of GFX9
  i.max_engine_clock = uint64_t{d.max_engine_clock_mhz} * 1000;
  i.cu_active_number = d.cu_count;
  uint32_t arrays = d.num_shader_engines * d.shader_arrays_per_engine;
  i.num_cu_per_sh = arrays ? d.cu_count / arrays : 0;
  uint32_t sh_mask = i.num_cu_per_sh >= 32 ? ~0u : (1u << i.num_cu_per_sh) - 1;
  for (uint32_t se = 0; se < 4 && se < d.num_shader_engines; ++se)
    for (uint32_t sh = 0; sh < 4 && sh < d.shader_arrays_per_engine; ++sh) {
      i.cu_bitmap[se][sh] = sh_mask;
      i.cu_ao_bitmap[se][sh] = sh_mask;
    }
  i.cu_ao_mask = sh_mask;
  i.ids_flags = 0;  // a discrete GPU (no AMDGPU_IDS_FLAGS_FUSION)
  // GFX9 GPUVM: 48-bit addresses split in a low and a high half; the bottom 2 MiB are reserved.
  i.virtual_address_offset = 0x200000;
  i.virtual_address_max = 0x800000000000ull;
  i.high_va_offset = 0xffff800000000000ull;
  i.high_va_max = 0xffffffffffe00000ull;
  i.virtual_address_alignment = 4096;
  i.pte_fragment_size = 2 << 20;
  i.gart_page_size = 4096;
  i.vram_type = AMDGPU_VRAM_TYPE_HBM;
  i.wave_front_size = d.wave_front_size;
  i.num_shader_visible_vgprs = 512;
  return i;
}

int amdgpu_info(const protocol::DrmDeviceInfo& d, void* arg) {
  drm_amdgpu_info q;
  if (!copy_in(&q, arg, sizeof q)) return fail(EFAULT);
  auto* out = reinterpret_cast<void*>(static_cast<uintptr_t>(q.return_pointer));
  // The kernel copies min(return_size, its struct size) bytes.
  auto answer = [&](const void* value, std::size_t size) {
    std::size_t n = q.return_size < size ? q.return_size : size;
    return copy_out(out, value, n) ? 0 : fail(EFAULT);
  };
  switch (q.query) {
    case AMDGPU_INFO_ACCEL_WORKING: {
      uint32_t working = 1;
      return answer(&working, sizeof working);
    }
    case AMDGPU_INFO_DEV_INFO: {
      auto i = dev_info(d);
      return answer(&i, sizeof i);
    }
    case AMDGPU_INFO_READ_MMR_REG: {
      // No register file behind the simulation: every register reads as zero.
      uint32_t count = q.read_mmr_reg.count;
      if (count == 0 || count > 128) return fail(EINVAL);
      std::array<uint32_t, 128> zeros{};
      return answer(zeros.data(), count * sizeof(uint32_t));
    }
    default:
      if (debug_enabled())
        std::fprintf(stderr, "kfdshim: AMDGPU_INFO query 0x%x on renderD%u is not simulated\n",
                     q.query, d.render_minor);
      return fail(EINVAL);
  }
}

}  // namespace

std::optional<int> render_minor_of_path(const char* path) {
  if (!path || std::strncmp(path, "/dev/dri/", 9) != 0) return std::nullopt;
  std::string p = protocol::normalize_path(path);
  if (p.compare(0, 16, "/dev/dri/renderD") != 0 || p.size() == 16) return std::nullopt;
  int minor = 0;
  for (std::size_t i = 16; i < p.size(); ++i) {
    if (p[i] < '0' || p[i] > '9' || minor > 100000) return std::nullopt;
    minor = minor * 10 + (p[i] - '0');
  }
  return minor;
}

bool drm_node_exists(int minor) { return node_info(minor).has_value(); }

std::optional<int> drm_open(int minor, int flags) {
  if (!node_info(minor)) return std::nullopt;
  // The node's placeholder in the machine's files, not /dev/null: kfdsimd knows a render node by
  // that file (ACQUIRE_VM refuses other files, as amdgpu_file_to_fpriv does). Read-only, so that
  // nothing written to the descriptor lands in it; each open is still a file of its own.
  const std::string placeholder =
      protocol::render_node_placeholder(files_root(), static_cast<uint32_t>(minor));
  int fd = REAL(open)(placeholder.c_str(), O_RDONLY | (flags & O_CLOEXEC));
  if (fd < 0) return -1;
  if (!fd_table().set_drm(fd, minor)) {
    REAL(close)(fd);
    errno = EMFILE;
    return -1;
  }
  return fd;
}

int drm_ioctl(int fd, unsigned long request, void* arg) {
  auto info = node_info(fd_table().drm_minor(fd));
  if (!info) return fail(ENODEV);
  if (_IOC_TYPE(request) != DRM_IOCTL_BASE) return fail(ENOTTY);
  switch (_IOC_NR(request)) {
    case _IOC_NR(DRM_IOCTL_VERSION):
      return drm_version(arg);
    case DRM_COMMAND_BASE + DRM_AMDGPU_INFO:
      return amdgpu_info(*info, arg);
    default:
      if (debug_enabled())
        std::fprintf(stderr, "kfdshim: DRM ioctl 0x%lx on renderD%u is not simulated\n", request,
                     info->render_minor);
      return fail(EINVAL);
  }
}

void* drm_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return map_device_memory(addr, len, prot, flags, off, 0, fd_table().drm_minor(fd));
}

void as_drm_node(struct stat* st, int minor) {
  st->st_mode = S_IFCHR | 0666;
  st->st_rdev = makedev(kDrmMajor, static_cast<unsigned>(minor));
  st->st_size = 0;
}

}  // namespace gpreempt::sim::shim
