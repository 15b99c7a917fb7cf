#include "bounded_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/text_file.h"

namespace gpreemptd {

namespace {

// The whole of `fd` if it is a regular file of at most `max_bytes`; closes it.
std::optional<std::string> read_bounded(int fd, std::size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int e = S_ISREG(st.st_mode) ? errno : EINVAL;
    ::close(fd);
    errno = e;
    return std::nullopt;
  }
  auto out = gpreempt::read_descriptor(fd, max_bytes);
  const int e = errno;
  ::close(fd);
  errno = e;
  return out;
}

}  // namespace

ProcDir::ProcDir(const std::string& proc_root, int pid)
    : fd_(::open((proc_root + "/" + std::to_string(pid)).c_str(),
                 O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) {}

ProcDir::~ProcDir() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> ProcDir::read(const char* name, std::size_t max_bytes) const {
  if (fd_ < 0) return std::nullopt;
  const int fd = ::openat(fd_, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  return read_bounded(fd, max_bytes);
}

std::optional<std::string> ProcDir::link(const char* name) const {
  if (fd_ < 0) return std::nullopt;
  char buf[4096];
  const ssize_t n = ::readlinkat(fd_, name, buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<std::string> read_file_beneath(const std::string& root, const std::string& relative,
                                             std::size_t max_bytes) {
  const int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return std::nullopt;
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof how));
  if (fd < 0 && (errno == ENOSYS || errno == EPERM))  // no openat2, or a seccomp filter refusing it
    fd = ::openat(dir, relative.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  const int e = errno;
  ::close(dir);
  if (fd < 0) {
    errno = e;
    return std::nullopt;
  }
  return read_bounded(fd, max_bytes);
}

}  // namespace gpreemptd
