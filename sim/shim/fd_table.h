// Which descriptors of this process are simulated /dev/kfd files (and who opened them), and which
// are emulated DRM render nodes, and which belong to the shim itself (its daemon connections). Lock-free so that close/dup stay
// async-signal-safe; descriptors beyond kMaxFd are never kfd files (open gives the lowest free
// number, so that limit is only reached by programs with tens of thousands of open files).
#pragma once

#include <atomic>
#include <cstdint>

namespace gpreempt::sim::shim {

class FdTable {
 public:
  static constexpr int kMaxFd = 1 << 16;

  // Process id of the process that opened /dev/kfd on `fd` (the fd stays bound to it across
  // fork, as the kernel's is), or 0 when `fd` is not a kfd file.
  int kfd_opener(int fd) const;
  // Returns false when `fd` is beyond the table (the caller must then not hand it out).
  bool set_kfd(int fd, int opener_pid, uint32_t session);
  // The daemon session (daemon_client.h, live_session) the kfd file was opened in: the file
  // works only as long as that daemon serves this process.
  uint32_t kfd_session(int fd) const;
  void clear(int fd);
  // dup/dup2/fcntl(F_DUPFD): `to` becomes whatever `from` is (or is cleared).
  void copy(int from, int to);

  // The render-node minor of an emulated /dev/dri/renderD<N> descriptor, or -1. DRM files are
  // not bound to a process: a forked child may use them.
  int drm_minor(int fd) const;
  bool set_drm(int fd, int minor);

  bool is_internal(int fd) const;
  void set_internal(int fd, bool internal);
  // Calls f(fd) for every internal descriptor (after fork, to drop the parent's connections).
  template <typename F>
  void for_each_internal(F f) const {
    for (int fd = 0; fd < kMaxFd; ++fd)
      if (internal_[fd].load(std::memory_order_relaxed)) f(fd);
  }

 private:
  std::atomic<int32_t> kfd_[kMaxFd] = {};
  std::atomic<uint32_t> session_[kMaxFd] = {};
  std::atomic<int32_t> drm_[kMaxFd] = {};  // minor + 1; 0 = not a DRM node
  std::atomic<uint8_t> internal_[kMaxFd] = {};
};

FdTable& fd_table();

}  // namespace gpreempt::sim::shim
