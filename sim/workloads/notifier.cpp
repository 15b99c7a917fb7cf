#include "notifier.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "common/error.h"

namespace gpreempt::workloads {

std::string format_start(uint64_t request, int pid, int64_t t) {
  return "start " + std::to_string(request) + " " + std::to_string(pid) + " " + std::to_string(t) + "\n";
}

std::string format_end(uint64_t request, int pid, int64_t t, int64_t latency) {
  return "end " + std::to_string(request) + " " + std::to_string(pid) + " " + std::to_string(t) +
         " " + std::to_string(latency) + "\n";
}

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw gpreempt::Error(errno, "--notify " + path + ": " + what + ": " + std::strerror(errno));
}

class FdNotifier final : public RequestObserver {
 public:
  FdNotifier(int fd, bool ack) : fd_(fd), ack_(ack), pid_(getpid()) {}
  ~FdNotifier() override { ::close(fd_); }
  void request_start(uint64_t id, int64_t t) override {
    std::lock_guard lk(mu_);
    send(format_start(id, pid_, t));
    if (ack_) {
      char c;
      while (::read(fd_, &c, 1) < 0 && errno == EINTR) {
      }
    }
  }
  void request_end(uint64_t id, int64_t t, int64_t latency) override {
    std::lock_guard lk(mu_);
    send(format_end(id, pid_, t, latency));
  }

 private:
  // A controller that went away must not take the workload down: the line is dropped.
  void send(const std::string& line) {
    const char* p = line.data();
    std::size_t left = line.size();
    while (left) {
      const ssize_t n = ::send(fd_, p, left, MSG_NOSIGNAL);
      if (n < 0 && errno == ENOTSOCK) {
        const ssize_t w = ::write(fd_, p, left);
        if (w <= 0) return;
        p += w;
        left -= static_cast<std::size_t>(w);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  int fd_;
  bool ack_;
  int pid_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<RequestObserver> open_notifier(const std::string& path, bool wait_for_ack) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) fail(path, "cannot stat");
  if (S_ISFIFO(st.st_mode)) {
    if (wait_for_ack) {
      errno = EINVAL;
      fail(path, "a FIFO cannot carry acknowledgements (use a Unix socket)");
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot open FIFO");
    return std::make_unique<FdNotifier>(fd, false);
  }
  if (!S_ISSOCK(st.st_mode)) {
    errno = EINVAL;
    fail(path, "neither a Unix socket nor a FIFO");
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    fail(path, "path too long for a Unix socket");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  for (int type : {SOCK_SEQPACKET, SOCK_STREAM}) {
    const int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0) fail(path, "socket");
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
      return std::make_unique<FdNotifier>(fd, wait_for_ack);
    const int e = errno;
    ::close(fd);
    errno = e;
    if (e != EPROTOTYPE) fail(path, "cannot connect");
  }
  fail(path, "cannot connect");
}

}  // namespace gpreempt::workloads
