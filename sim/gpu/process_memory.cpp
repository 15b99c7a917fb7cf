#include "sim/gpu/process_memory.h"

#include <sys/uio.h>

namespace gpreempt::sim::gpu {

bool ProcessVmMemory::read(int pid, uint64_t addr, void* dst, std::size_t len) {
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

bool ProcessVmMemory::write(int pid, uint64_t addr, const void* src, std::size_t len) {
  iovec local{const_cast<void*>(src), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

}  // namespace gpreempt::sim::gpu
