// The amdgpu DRM render nodes (/dev/dri/renderD<N>) of the simulated GPUs, answered inside the
// process the way Mesa's drm-shim does: libdrm_amdgpu's amdgpu_device_initialize (used by
// libhsakmt for the marketing name) needs DRM_IOCTL_VERSION and a handful of AMDGPU_INFO queries;
// the values come from the device profile (asked from kfdsimd once per node).
#pragma once

#include <sys/stat.h>

#include <optional>

namespace gpreempt::sim::shim {

// N when `path` is "/dev/dri/renderD<N>" (after normalisation), else nullopt.
std::optional<int> render_minor_of_path(const char* path);

// Opens the emulated node; nullopt when the simulated machine has no GPU with that minor (the
// caller then passes the call through to the real file system).
std::optional<int> drm_open(int minor, int flags);

// True when the simulated machine has a render node with this minor.
bool drm_node_exists(int minor);

// ioctl on an emulated node: the syscall result (errno set on failure).
int drm_ioctl(int fd, unsigned long request, void* arg);

// mmap of an emulated node at a buffer object's offset (ALLOC_MEMORY_OF_GPU's mmap_offset; any
// other offset, or more than the buffer, is EINVAL as from drm_gem_mmap): the shared memory
// kfdsimd keeps for that offset, so a buffer mapped twice (ROCr's AQL ring) or read
// by the simulated GPU shows the same bytes.
void* drm_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off);

// Makes a stat result look like the character device 226:<minor>.
void as_drm_node(struct stat* st, int minor);

}  // namespace gpreempt::sim::shim
