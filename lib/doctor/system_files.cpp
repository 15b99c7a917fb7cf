#include "doctor/system_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace gpreempt::doctor {

SystemFiles::SystemFiles(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string SystemFiles::path(std::string_view absolute) const {
  return root_ + std::string(absolute);
}

std::optional<std::string> SystemFiles::read(std::string_view absolute, int* error) const {
  // open/read rather than streams: the errno is the answer for unreadable files (EACCES on
  // debugfs as a user), and proc/sys files report size 0, so read until EOF.
  const int fd = ::open(path(absolute).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = errno;
    return std::nullopt;
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      if (error) *error = e;
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    // Bounded: every file doctor reads is small except /proc/PID/maps, which stays far below this.
    if (out.size() > (16u << 20)) break;
  }
  ::close(fd);
  return out;
}

std::optional<std::string> SystemFiles::read_line(std::string_view absolute, int* error) const {
  auto text = read(absolute, error);
  if (!text) return std::nullopt;
  const auto nl = text->find('\n');
  if (nl != std::string::npos) text->resize(nl);
  return text;
}

bool SystemFiles::exists(std::string_view absolute) const {
  struct stat st {};
  return ::stat(path(absolute).c_str(), &st) == 0;
}

}  // namespace gpreempt::doctor
