#include "sim/shim/fd_table.h"

namespace gpreempt::sim::shim {

int FdTable::kfd_opener(int fd) const {
  if (fd < 0 || fd >= kMaxFd) return 0;
  return kfd_[fd].load(std::memory_order_acquire);
}

bool FdTable::set_kfd(int fd, int opener_pid, uint32_t session) {
  if (fd < 0 || fd >= kMaxFd) return false;
  session_[fd].store(session, std::memory_order_release);
  kfd_[fd].store(opener_pid, std::memory_order_release);
  return true;
}

uint32_t FdTable::kfd_session(int fd) const {
  if (fd < 0 || fd >= kMaxFd) return 0;
  return session_[fd].load(std::memory_order_acquire);
}

void FdTable::clear(int fd) {
  if (fd < 0 || fd >= kMaxFd) return;
  kfd_[fd].store(0, std::memory_order_release);
  session_[fd].store(0, std::memory_order_release);
  drm_[fd].store(0, std::memory_order_release);
}

void FdTable::copy(int from, int to) {
  if (to < 0 || to >= kMaxFd) return;
  session_[to].store(kfd_session(from), std::memory_order_release);
  kfd_[to].store(kfd_opener(from), std::memory_order_release);
  drm_[to].store(drm_minor(from) + 1, std::memory_order_release);
}

int FdTable::drm_minor(int fd) const {
  if (fd < 0 || fd >= kMaxFd) return -1;
  return drm_[fd].load(std::memory_order_acquire) - 1;
}

bool FdTable::set_drm(int fd, int minor) {
  if (fd < 0 || fd >= kMaxFd) return false;
  drm_[fd].store(minor + 1, std::memory_order_release);
  return true;
}

bool FdTable::is_internal(int fd) const {
  if (fd < 0 || fd >= kMaxFd) return false;
  return internal_[fd].load(std::memory_order_acquire) != 0;
}

void FdTable::set_internal(int fd, bool internal) {
  if (fd < 0 || fd >= kMaxFd) return;
  internal_[fd].store(internal ? 1 : 0, std::memory_order_release);
}

FdTable& fd_table() {
  // Constant-initialised (all zero) static storage: usable from the first interposed call, even
  // one made by another library's constructor before ours ran.
  static FdTable table;
  return table;
}

}  // namespace gpreempt::sim::shim
