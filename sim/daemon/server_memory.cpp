// What a client maps from /dev/kfd: a memfd per mmap offset, shared with the client, and the
// doorbell pages the hardware model watches; memory the device allocates for a client to map (the
// kernel's event page) is such a memfd too.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sim/daemon/server_state.h"

namespace gpreempt::sim::daemon {

namespace {

// mmap offsets of /dev/kfd (kfd_priv.h): the type in bits 62-63, the gpu_id in bits 46-61.
constexpr int kMmapTypeShift = 62;
constexpr uint64_t kMmapTypeDoorbell = 0x3;
constexpr int kMmapGpuIdShift = 46;

std::size_t page_round(std::size_t n) {
  std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

}  // namespace

Server::Mapping* Server::shared_memory(Proc& p, uint64_t offset, std::size_t length, int* err) {
  Mapping& m = p.mappings[offset];
  std::size_t bytes = page_round(length);
  if (m.memfd < 0) {
    char name[64];
    std::snprintf(name, sizeof name, "kfd-mmap-%d-%llx", p.pid,
                  static_cast<unsigned long long>(offset));
    m.memfd = memfd_create(name, MFD_CLOEXEC);
    if (m.memfd < 0) {
      *err = -errno;
      return nullptr;
    }
    m.doorbell = (offset >> kMmapTypeShift) == kMmapTypeDoorbell;
    m.gpu_id = static_cast<uint32_t>((offset >> kMmapGpuIdShift) & 0xffff);
  }
  if (bytes > m.bytes) {
    if (ftruncate(m.memfd, static_cast<off_t>(bytes)) != 0) {
      *err = -errno;
      return nullptr;
    }
    if (m.addr) {
      if (m.doorbell) hardware_->doorbell_unmapped(p.pid, m.gpu_id);
      munmap(m.addr, m.bytes);
    }
    m.addr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.memfd, 0);
    if (m.addr == MAP_FAILED) {
      m.addr = nullptr;
      m.bytes = 0;
      *err = -ENOMEM;
      return nullptr;
    }
    m.bytes = bytes;
    if (m.doorbell) hardware_->doorbell_mapped(p.pid, m.gpu_id, m.addr, m.bytes);
  }
  return &m;
}

void* Server::kernel_memory(int pid, uint64_t offset, std::size_t bytes) {
  watch_process(pid);
  auto pit = procs_.find(pid);
  if (pit == procs_.end() || pit->second->retired) return nullptr;
  int err = 0;
  Mapping* m = shared_memory(*pit->second, offset, bytes, &err);
  return m ? m->addr : nullptr;
}

void Server::handle_mmap(int fd, const protocol::Request& req) {
  uint64_t length = 0;
  uint32_t render_minor = 0;
  const bool render = req.payload.size() == sizeof length + sizeof render_minor;
  if (req.payload.size() != sizeof length && !render) {
    reply(fd, -EINVAL);
    return;
  }
  std::memcpy(&length, req.payload.data(), sizeof length);
  if (render) {
    // A render node's buffer object: only what the device handed out (drm_gem_mmap).
    std::memcpy(&render_minor, req.payload.data() + sizeof length, sizeof render_minor);
    if (int err = device_->check_render_mmap(req.pid, render_minor, req.arg, length)) {
      reply(fd, err);
      return;
    }
  } else if (int err = device_->check_kfd_mmap(req.pid, req.arg, length)) {
    reply(fd, err);
    return;
  }
  watch_process(req.pid);
  auto pit = procs_.find(req.pid);
  if (pit == procs_.end() || pit->second->retired || length == 0) {
    reply(fd, pit == procs_.end() ? -ESRCH : -EINVAL);
    return;
  }
  int err = 0;
  Mapping* m = shared_memory(*pit->second, req.arg, length, &err);
  if (!m) {
    reply(fd, err);
    return;
  }
  reply(fd, 0, {}, m->memfd);
}

void Server::release_mapping(int pid, uint64_t offset) {
  auto pit = procs_.find(pid);
  if (pit == procs_.end()) return;
  auto& mappings = pit->second->mappings;
  auto it = mappings.find(offset);
  if (it == mappings.end()) return;
  Mapping& m = it->second;
  if (m.doorbell && m.addr) hardware_->doorbell_unmapped(pid, m.gpu_id);
  if (m.addr) munmap(m.addr, m.bytes);
  if (m.memfd >= 0) ::close(m.memfd);
  mappings.erase(it);
}

void Server::release_mappings(Proc& p) {
  for (auto& [off, m] : p.mappings) {
    if (m.doorbell && m.addr) hardware_->doorbell_unmapped(p.pid, m.gpu_id);
    if (m.addr) munmap(m.addr, m.bytes);
    if (m.memfd >= 0) ::close(m.memfd);
  }
  p.mappings.clear();
}

}  // namespace gpreempt::sim::daemon
