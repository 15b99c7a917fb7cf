// libkfdshim.so: the LD_PRELOAD interposer of the simulated KFD.
//
// /dev/kfd opens become a real descriptor (of /dev/null, so dup/fcntl/close/poll behave) recorded
// in FdTable; ioctl and mmap on it go to kfdsimd. sysfs/debugfs paths of the KFD are redirected
// into the directory where kfdsimd materialises them (after asking it to refresh), so the real
// libc does the reading, stat-ing and directory walking. Every other call passes through.
//
// The exported libc entry points and what each does with a simulated descriptor or path; the
// /dev/kfd file is kfd_file.cpp, the path redirection guest_paths.cpp.
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/protocol/machine_paths.h"
#include "sim/shim/drm_render.h"
#include "sim/shim/fd_table.h"
#include "sim/shim/guest_paths.h"
#include "sim/shim/kfd_file.h"
#include "sim/shim/real_libc.h"

// glibc >= 2.33 still exports the __xstat family for old binaries but no longer declares it.
extern "C" {
int __xstat(int, const char*, struct stat*);
int __lxstat(int, const char*, struct stat*);
int __fxstat(int, int, struct stat*);
int __fxstatat(int, int, const char*, struct stat*, int);
}

namespace gpreempt::sim::shim {
namespace {

using protocol::GuestPathKind;

ssize_t copy_link(const char* target, char* buf, size_t size) {
  size_t n = strlen(target);
  if (n > size) n = size;
  memcpy(buf, target, n);
  return static_cast<ssize_t>(n);
}

int dup_result(int from, int to) {
  if (to >= 0) fd_table().copy(from, to);
  return to;
}

mode_t open_mode(int flags, va_list ap) {
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) return va_arg(ap, mode_t);
  return 0;
}

// A /dev/dri/renderD<N> of the simulated machine (asks the daemon only for such paths).
std::optional<int> simulated_render_minor(const char* path) {
  auto minor = render_minor_of_path(path);
  if (minor && drm_node_exists(*minor)) return minor;
  return std::nullopt;
}

void patch_fd_stat(int fd, struct stat* st) {
  if (is_kfd_fd(fd)) as_kfd_node(st);
  if (int minor = fd_table().drm_minor(fd); minor >= 0) as_drm_node(st, minor);
}

void patch_fd_statx(int fd, struct statx* st) {
  if (is_kfd_fd(fd)) as_kfd_node(st);
  if (int minor = fd_table().drm_minor(fd); minor >= 0) {
    st->stx_mode = static_cast<uint16_t>(S_IFCHR | 0666);
    st->stx_rdev_major = 226;
    st->stx_rdev_minor = static_cast<uint32_t>(minor);
    st->stx_size = 0;
  }
}

// stat of an emulated render node: /dev/null's metadata dressed as the DRM character device.
template <typename Stat>
bool stat_render_node(const char* path, Stat* st) {
  auto minor = simulated_render_minor(path);
  if (!minor) return false;
  REAL(stat)("/dev/null", reinterpret_cast<struct stat*>(st));
  as_drm_node(reinterpret_cast<struct stat*>(st), *minor);
  return true;
}

int open_common(const char* path, int flags, mode_t mode) {
  if (auto minor = render_minor_of_path(path))
    if (auto fd = drm_open(*minor, flags)) return *fd;
  auto g = resolve(path);
  if (g.kind == GuestPathKind::kKfdNode) return kfd_open(flags);
  return REAL(open)(g.c_str(path), flags, mode);
}

int openat_common(int dirfd, const char* path, int flags, mode_t mode) {
  if (auto minor = render_minor_of_path(path))
    if (auto fd = drm_open(*minor, flags)) return *fd;
  auto g = resolve(path);
  if (g.kind == GuestPathKind::kKfdNode) return kfd_open(flags);
  return REAL(openat)(dirfd, g.c_str(path), flags, mode);
}

}  // namespace
}  // namespace gpreempt::sim::shim

using namespace gpreempt::sim::shim;
using gpreempt::sim::protocol::GuestPathKind;

extern "C" {

#define SHIM_EXPORT __attribute__((visibility("default")))

// ---- open family ---------------------------------------------------------------------------------
SHIM_EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return open_common(path, flags, mode);
}
SHIM_EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return open_common(path, flags, mode);
}
SHIM_EXPORT int __open_2(const char* path, int flags) { return open_common(path, flags, 0); }
SHIM_EXPORT int __open64_2(const char* path, int flags) { return open_common(path, flags, 0); }
SHIM_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return openat_common(dirfd, path, flags, mode);
}
SHIM_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return openat_common(dirfd, path, flags, mode);
}
SHIM_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return openat_common(dirfd, path, flags, 0);
}
SHIM_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return openat_common(dirfd, path, flags, 0);
}
SHIM_EXPORT int creat(const char* path, mode_t mode) {
  return open_common(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
SHIM_EXPORT int creat64(const char* path, mode_t mode) {
  return open_common(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

// stdio opens through libc-internal calls the shim cannot see, so fopen is interposed itself.
SHIM_EXPORT FILE* fopen(const char* path, const char* mode) {
  auto g = resolve(path);
  if (g.kind == GuestPathKind::kKfdNode) {
    int flags = strchr(mode, '+') ? O_RDWR : (mode[0] == 'r' ? O_RDONLY : O_WRONLY);
    if (strchr(mode, 'e')) flags |= O_CLOEXEC;
    int fd = kfd_open(flags);
    if (fd < 0) return nullptr;
    FILE* f = fdopen(fd, mode);
    if (!f) {
      int saved = errno;
      fd_table().clear(fd);
      REAL(close)(fd);
      errno = saved;
    }
    return f;
  }
  return REAL(fopen)(g.c_str(path), mode);
}
SHIM_EXPORT FILE* fopen64(const char* path, const char* mode) { return fopen(path, mode); }

// ---- descriptors -----------------------------------------------------------------------------------
SHIM_EXPORT int close(int fd) {
  // The shim's own daemon connections are invisible to the program (a "close every fd" loop must
  // not cut the process off from its device).
  if (fd_table().is_internal(fd)) {
    errno = EBADF;
    return -1;
  }
  fd_table().clear(fd);
  return REAL(close)(fd);
}
SHIM_EXPORT int dup(int fd) { return dup_result(fd, REAL(dup)(fd)); }
SHIM_EXPORT int dup2(int from, int to) {
  if (fd_table().is_internal(to)) {
    errno = EBUSY;
    return -1;
  }
  int r = REAL(dup2)(from, to);
  return r >= 0 && from != to ? dup_result(from, r) : r;
}
SHIM_EXPORT int dup3(int from, int to, int flags) {
  if (fd_table().is_internal(to)) {
    errno = EBUSY;
    return -1;
  }
  return dup_result(from, REAL(dup3)(from, to, flags));
}
SHIM_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  int r = REAL(fcntl)(fd, cmd, arg);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) dup_result(fd, r);
  return r;
}
SHIM_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  int r = REAL(fcntl)(fd, cmd, arg);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) dup_result(fd, r);
  return r;
}

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (is_kfd_fd(fd)) return kfd_ioctl(fd, request, arg);
  if (fd_table().drm_minor(fd) >= 0) return drm_ioctl(fd, request, arg);
  return REAL(ioctl)(fd, request, arg);
}

SHIM_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (fd >= 0 && is_kfd_fd(fd)) return kfd_mmap(addr, len, prot, flags, fd, off);
  if (fd >= 0 && fd_table().drm_minor(fd) >= 0) return drm_mmap(addr, len, prot, flags, fd, off);
  return REAL(mmap)(addr, len, prot, flags, fd, off);
}
SHIM_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

// The KFD file has no read method: the kernel answers -EINVAL.
SHIM_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  if (is_kfd_fd(fd)) {
    errno = EINVAL;
    return -1;
  }
  return REAL(read)(fd, buf, n);
}
SHIM_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  if (is_kfd_fd(fd)) {
    errno = EINVAL;
    return -1;
  }
  return REAL(pread)(fd, buf, n, off);
}
SHIM_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off_t off) { return pread(fd, buf, n, off); }

// ---- stat family --------------------------------------------------------------------------------------
SHIM_EXPORT int stat(const char* path, struct stat* st) {
  if (stat_render_node(path, st)) return 0;
  auto g = resolve(path);
  int r = REAL(stat)(g.c_str(path), st);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  return r;
}
SHIM_EXPORT int stat64(const char* path, struct stat64* st) {
  return stat(path, reinterpret_cast<struct stat*>(st));
}
SHIM_EXPORT int lstat(const char* path, struct stat* st) {
  if (stat_render_node(path, st)) return 0;
  auto g = resolve(path);
  int r = REAL(lstat)(g.c_str(path), st);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  return r;
}
SHIM_EXPORT int lstat64(const char* path, struct stat64* st) {
  return lstat(path, reinterpret_cast<struct stat*>(st));
}
SHIM_EXPORT int fstat(int fd, struct stat* st) {
  int r = REAL(fstat)(fd, st);
  if (r == 0) patch_fd_stat(fd, st);
  return r;
}
SHIM_EXPORT int fstat64(int fd, struct stat64* st) {
  return fstat(fd, reinterpret_cast<struct stat*>(st));
}
SHIM_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  if (stat_render_node(path, st)) return 0;
  auto g = resolve(path);
  int r = REAL(fstatat)(dirfd, g.c_str(path), st, flags);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  if (r == 0 && (flags & AT_EMPTY_PATH) && path && !*path) patch_fd_stat(dirfd, st);
  return r;
}
SHIM_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return fstatat(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}
SHIM_EXPORT int statx(int dirfd, const char* path, int flags, unsigned mask, struct statx* st) {
  if (simulated_render_minor(path)) {
    int r = REAL(statx)(AT_FDCWD, "/dev/null", flags, mask, st);
    if (r == 0) {
      int minor = *render_minor_of_path(path);
      st->stx_mode = static_cast<uint16_t>(S_IFCHR | 0666);
      st->stx_rdev_major = 226;
      st->stx_rdev_minor = static_cast<uint32_t>(minor);
    }
    return r;
  }
  auto g = resolve(path);
  int r = REAL(statx)(dirfd, g.c_str(path), flags, mask, st);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  if (r == 0 && (flags & AT_EMPTY_PATH) && (!path || !*path)) patch_fd_statx(dirfd, st);
  return r;
}
// Programs built against glibc < 2.33 call the versioned __xstat family instead.
SHIM_EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  if (stat_render_node(path, st)) return 0;
  auto g = resolve(path);
  int r = REAL(__xstat)(ver, g.c_str(path), st);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  return r;
}
SHIM_EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  return __xstat(ver, path, reinterpret_cast<struct stat*>(st));
}
SHIM_EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  auto g = resolve(path);
  int r = REAL(__lxstat)(ver, g.c_str(path), st);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  return r;
}
SHIM_EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  return __lxstat(ver, path, reinterpret_cast<struct stat*>(st));
}
SHIM_EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  int r = REAL(__fxstat)(ver, fd, st);
  if (r == 0) patch_fd_stat(fd, st);
  return r;
}
SHIM_EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  return __fxstat(ver, fd, reinterpret_cast<struct stat*>(st));
}
SHIM_EXPORT int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int flags) {
  auto g = resolve(path);
  int r = REAL(__fxstatat)(ver, dirfd, g.c_str(path), st, flags);
  if (r == 0 && g.kind == GuestPathKind::kKfdNode) as_kfd_node(st);
  return r;
}
SHIM_EXPORT int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st, int flags) {
  return __fxstatat(ver, dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}

// ---- extended attributes (ls -l asks for security labels and ACLs) ----------------------------
SHIM_EXPORT ssize_t getxattr(const char* path, const char* name, void* value, size_t size) {
  auto g = resolve(path);
  return REAL(getxattr)(g.c_str(path), name, value, size);
}
SHIM_EXPORT ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size) {
  auto g = resolve(path);
  return REAL(lgetxattr)(g.c_str(path), name, value, size);
}
SHIM_EXPORT ssize_t listxattr(const char* path, char* list, size_t size) {
  auto g = resolve(path);
  return REAL(listxattr)(g.c_str(path), list, size);
}
SHIM_EXPORT ssize_t llistxattr(const char* path, char* list, size_t size) {
  auto g = resolve(path);
  return REAL(llistxattr)(g.c_str(path), list, size);
}

// ---- access, links, directories -----------------------------------------------------------------------
SHIM_EXPORT int access(const char* path, int mode) {
  if (simulated_render_minor(path)) return 0;
  auto g = resolve(path);
  return REAL(access)(g.c_str(path), mode);
}
SHIM_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
  auto g = resolve(path);
  return REAL(faccessat)(dirfd, g.c_str(path), mode, flags);
}
SHIM_EXPORT int euidaccess(const char* path, int mode) {
  auto g = resolve(path);
  return REAL(euidaccess)(g.c_str(path), mode);
}
SHIM_EXPORT int eaccess(const char* path, int mode) { return euidaccess(path, mode); }

SHIM_EXPORT ssize_t readlink(const char* path, char* buf, size_t size) {
  if (kfd_fd_link(path)) return copy_link("/dev/kfd", buf, size);
  auto g = resolve(path);
  return REAL(readlink)(g.c_str(path), buf, size);
}
SHIM_EXPORT ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) {
  if (kfd_fd_link(path)) return copy_link("/dev/kfd", buf, size);
  auto g = resolve(path);
  return REAL(readlinkat)(dirfd, g.c_str(path), buf, size);
}

// The result is put back into guest terms: the caller never sees the machine's directory.
SHIM_EXPORT char* realpath(const char* path, char* resolved) {
  auto g = resolve(path);
  if (g.kind == GuestPathKind::kNone) return REAL(realpath)(path, resolved);
  if (g.kind == GuestPathKind::kKfdNode) {
    char* out = resolved ? resolved : static_cast<char*>(malloc(PATH_MAX));
    if (out) strcpy(out, "/dev/kfd");
    return out;
  }
  char* host = REAL(realpath)(g.host.c_str(), nullptr);
  if (!host) return nullptr;
  const std::string& root = files_root();
  const char* guest = strncmp(host, root.c_str(), root.size()) == 0 ? host + root.size() : host;
  char* out = resolved ? resolved : static_cast<char*>(malloc(strlen(guest) + 1));
  if (out) strcpy(out, guest);
  free(host);
  return out;
}

SHIM_EXPORT DIR* opendir(const char* path) {
  auto g = resolve(path);
  return REAL(opendir)(g.c_str(path));
}
SHIM_EXPORT int scandir(const char* path, struct dirent*** list,
                        int (*filter)(const struct dirent*),
                        int (*compar)(const struct dirent**, const struct dirent**)) {
  auto g = resolve(path);
  return REAL(scandir)(g.c_str(path), list, filter, compar);
}
SHIM_EXPORT int scandir64(const char* path, struct dirent64*** list,
                          int (*filter)(const struct dirent64*),
                          int (*compar)(const struct dirent64**, const struct dirent64**)) {
  auto g = resolve(path);
  return REAL(scandir64)(g.c_str(path), list, filter, compar);
}

}  // extern "C"
