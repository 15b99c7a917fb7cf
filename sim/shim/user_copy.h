// copy_from_user / copy_to_user on our own address space: a bad pointer handed to a simulated
// ioctl fails with EFAULT, as the kernel's copy would, instead of crashing the caller.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>

namespace gpreempt::sim::shim {

inline bool copy_in(void* dst, const void* src, std::size_t n) {
  if (n == 0) return true;
  iovec local{dst, n}, remote{const_cast<void*>(src), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

inline bool copy_out(void* dst, const void* src, std::size_t n) {
  if (n == 0) return true;
  iovec local{const_cast<void*>(src), n}, remote{dst, n};
  return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

}  // namespace gpreempt::sim::shim
