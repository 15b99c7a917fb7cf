// The simulated /dev/kfd file: opened as a /dev/null descriptor recorded in FdTable, its ioctls
// (arguments copied in and back as the kernel does) and mmaps forwarded to kfdsimd, and its stat.
#include "sim/shim/kfd_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "gpreempt/kfd_abi.h"
#include "sim/shim/daemon_client.h"
#include "sim/shim/debug_trace.h"
#include "sim/shim/fd_table.h"
#include "sim/shim/real_libc.h"
#include "sim/shim/user_copy.h"

namespace gpreempt::sim::shim {

using protocol::Op;

namespace {

// Device number reported for /dev/kfd. The real major is allocated dynamically at module load, so
// no value is "right"; this one is outside the statically assigned ranges.
constexpr unsigned kKfdMajor = 234;

int set_errno(long ret) {
  if (ret < 0) {
    errno = static_cast<int>(-ret);
    return -1;
  }
  return static_cast<int>(ret);
}

}  // namespace

int kfd_open(int flags) {
  auto r = call(Op::kOpenKfd, 0, {});
  if (r.error) return set_errno(-ENODEV);
  if (r.reply.ret < 0) return set_errno(r.reply.ret);
  const uint32_t session = live_session();
  if (session == 0) return set_errno(-ENODEV);  // the daemon went away right after it answered
  int fd = REAL(open)("/dev/null", O_RDWR | (flags & O_CLOEXEC));
  if (fd < 0) return -1;
  if (!fd_table().set_kfd(fd, getpid(), session)) {
    REAL(close)(fd);
    return set_errno(-EMFILE);
  }
  return fd;
}

namespace {

// AMDKFD_IOC_WAIT_EVENTS: the kernel sleeps in it interruptibly (docs/kfd-interface.md#events).
constexpr uint32_t kNrWaitEvents = 0x0C;

// The ioctls the kernel may sleep in interruptibly, and what a signal does there: WAIT_EVENTS and a
// DESTROY_QUEUE waiting for its suspended queue (wait_event_interruptible) return -ERESTARTSYS,
// which the kernel restarts after an SA_RESTART handler; a RUNTIME_ENABLE waiting for the debugger
// (down_interruptible) returns -EINTR, which it never restarts. kfdsimd decides whether the call is
// in that sleep; every other blocking call sleeps uninterruptibly in the kernel (the process mutex,
// the runlist's fence wait), so a signal never ends it.
protocol::SignalWait signal_wait_of(unsigned long request) {
  const uint32_t nr = kfd::ioc_nr(request);
  if (nr == kNrWaitEvents || nr == kfd::NR_DESTROY_QUEUE) return protocol::SignalWait::kRestartable;
  if (nr == kfd::NR_RUNTIME_ENABLE) return protocol::SignalWait::kAlwaysEnds;
  return protocol::SignalWait::kIgnore;
}

}  // namespace

int kfd_ioctl(int fd, unsigned long request, void* arg) {
  const protocol::SignalWait signals = signal_wait_of(request);
  // The kernel binds the file to the opening process: another process (a forked child) gets EBADF.
  if (fd_table().kfd_opener(fd) != getpid()) return set_errno(-EBADF);
  const std::size_t size = kfd::ioc_size(request);
  const uint32_t dir = kfd::ioc_dir(request);
  std::vector<uint8_t> args(size, 0);
  if (size && !copy_in(args.data(), arg, size) && (dir & kfd::IOC_WRITE)) return set_errno(-EFAULT);
  std::vector<uint8_t> sent = args;
  auto r = call(Op::kIoctl, request, std::move(args), fd_table().kfd_session(fd), signals);
  // The daemon gone, the device is: ENODEV, as from the kernel's file of an unplugged GPU.
  if (r.error) {
    if (debug_enabled())
      fprintf(stderr, "kfdshim[%d]: kfd ioctl nr 0x%02x: no answer from kfdsimd (%s)\n", getpid(),
              kfd::ioc_nr(request), strerror(static_cast<int>(-r.error)));
    return set_errno(r.error == -ENODEV ? -ENODEV : -EIO);
  }
  long ret = r.reply.ret;
  const auto& back = r.reply.payload;
  // Args are copied back even when the handler failed (docs/kfd-interface.md#ioctl-dispatch). Bytes
  // that did not change are not written when the request is write-only, so a const argument in
  // read-only memory works.
  if (size && back.size() == size && ((dir & kfd::IOC_READ) || back != sent)) {
    if (!copy_out(arg, back.data(), size)) ret = -EFAULT;
  }
  if (debug_enabled())
    fprintf(stderr, "kfdshim[%d]: kfd ioctl nr 0x%02x size %zu -> %ld%s%s\n", getpid(),
            kfd::ioc_nr(request), size, ret, ret < 0 ? " " : "", ret < 0 ? strerror(static_cast<int>(-ret)) : "");
  return set_errno(ret);
}

void* kfd_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (fd_table().kfd_opener(fd) != getpid()) {
    errno = EBADF;
    return MAP_FAILED;
  }
  return map_device_memory(addr, len, prot, flags, off, fd_table().kfd_session(fd), -1);
}

void* map_device_memory(void* addr, size_t len, int prot, int flags, off_t off, uint32_t session,
                        int render_minor) {
  // The kernel's own checks come before the driver's mmap: page-aligned offset, non-zero length.
  if (len == 0 || (static_cast<uint64_t>(off) & (static_cast<uint64_t>(getpagesize()) - 1)) != 0) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  uint64_t length = len;
  std::vector<uint8_t> payload(sizeof length);
  memcpy(payload.data(), &length, sizeof length);
  if (render_minor >= 0) {
    const uint32_t minor = static_cast<uint32_t>(render_minor);
    payload.resize(sizeof length + sizeof minor);
    memcpy(payload.data() + sizeof length, &minor, sizeof minor);
  }
  auto r = call(Op::kMmap, static_cast<uint64_t>(off), std::move(payload), session);
  if (r.error || r.reply.ret < 0 || r.fd < 0) {
    if (r.fd >= 0) REAL(close)(r.fd);
    errno = r.error == -ENODEV ? ENODEV
            : r.error          ? EIO
            : r.reply.ret < 0  ? static_cast<int>(-r.reply.ret)
                               : EINVAL;
    return MAP_FAILED;
  }
  void* p = REAL(mmap)(addr, len, prot, flags, r.fd, 0);
  int saved = errno;
  REAL(close)(r.fd);
  errno = saved;
  return p;
}

// /dev/kfd is a character device; its placeholder under root/ is a plain file.
void as_kfd_node(struct stat* st) {
  st->st_mode = S_IFCHR | (st->st_mode & 07777);
  st->st_rdev = makedev(kKfdMajor, 0);
  st->st_size = 0;
}
void as_kfd_node(struct statx* st) {
  st->stx_mode = static_cast<uint16_t>(S_IFCHR | (st->stx_mode & 07777));
  st->stx_rdev_major = kKfdMajor;
  st->stx_rdev_minor = 0;
  st->stx_size = 0;
}

bool is_kfd_fd(int fd) { return fd_table().kfd_opener(fd) != 0; }

// readlink of /proc/self/fd/N (or /proc/<our pid>/fd/N) for a kfd descriptor names /dev/kfd.
bool kfd_fd_link(const char* path) {
  if (!path || strncmp(path, "/proc/", 6) != 0) return false;
  const char* p = path + 6;
  std::string self = std::to_string(getpid()) + "/fd/";
  if (strncmp(p, "self/fd/", 8) == 0) {
    p += 8;
  } else if (strncmp(p, self.c_str(), self.size()) == 0) {
    p += self.size();
  } else {
    return false;
  }
  char* end = nullptr;
  long fd = strtol(p, &end, 10);
  return end != p && *end == '\0' && is_kfd_fd(static_cast<int>(fd));
}

}  // namespace gpreempt::sim::shim
