// The simulated /dev/kfd file: a /dev/null descriptor recorded in FdTable, whose ioctls and mmaps
// go to kfdsimd, and what stat and readlink show of it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace gpreempt::sim::shim {

// open("/dev/kfd"): a descriptor bound to this process and the daemon session it opened in.
int kfd_open(int flags);
int kfd_ioctl(int fd, unsigned long request, void* arg);
void* kfd_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off);
// Maps what kfdsimd keeps at mmap offset `off` of this process (shared memory it sees too): the
// kfd file's pages (`render_minor` -1) or a render node's buffer objects. `session` 0: any.
void* map_device_memory(void* addr, size_t len, int prot, int flags, off_t off, uint32_t session,
                        int render_minor);
// stat of /dev/kfd's placeholder made to show the character device.
void as_kfd_node(struct stat* st);
void as_kfd_node(struct statx* st);
bool is_kfd_fd(int fd);
// /proc/self/fd/N (or /proc/<our pid>/fd/N) naming a kfd descriptor.
bool kfd_fd_link(const char* path);

}  // namespace gpreempt::sim::shim
