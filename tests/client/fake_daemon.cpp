#include "fake_daemon.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

namespace gpreempt::client::testing {

namespace {

void send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away: nothing to tell it
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace

FakeDaemon::FakeDaemon(Handler handler) : handler_(std::move(handler)) {
  char tmpl[] = "/tmp/gpreempt-fake-daemon-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  path_ = dir_ + "/gpreemptd.sock";
  start();
}

FakeDaemon::FakeDaemon(Handler handler, std::string path)
    : handler_(std::move(handler)), path_(std::move(path)) {
  start();
}

void FakeDaemon::start() {
  if (!handler_) handler_ = [](const Message& m) { return ok(m.seq); };
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.size());
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    throw std::runtime_error("cannot serve " + path_ + ": " + std::strerror(errno));
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this] { serve(); });
}

FakeDaemon::~FakeDaemon() {
  // The socket file goes first, as a dead daemon's socket stops answering all at once: a client
  // whose connection the server thread closes below must not reach this daemon again.
  ::unlink(path_.c_str());
  const uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_fd_, &one, sizeof(one));
  thread_.join();
  ::close(stop_fd_);
  ::close(listen_fd_);
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

std::vector<Message> FakeDaemon::received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

int FakeDaemon::hangups() const {
  std::lock_guard lock(mutex_);
  return hangups_;
}

void FakeDaemon::serve() {
  std::map<int, LineReader> clients;
  auto drop = [&](int fd, bool by_client) {
    ::close(fd);
    clients.erase(fd);
    if (by_client) {
      std::lock_guard lock(mutex_);
      ++hangups_;
    }
  };
  for (;;) {
    std::vector<pollfd> fds{{stop_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& [fd, reader] : clients) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) clients.emplace(fd, LineReader{});
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      const int fd = fds[i].fd;
      char buf[8192];
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        drop(fd, true);
        continue;
      }
      std::vector<std::string> lines;
      try {
        lines = clients[fd].feed(std::string_view(buf, static_cast<std::size_t>(n)));
      } catch (const ProtocolError& e) {
        send_all(fd, encode(error_reply(0, e.code, e.message)));
        drop(fd, false);
        continue;
      }
      for (const auto& line : lines) {
        Action action;
        try {
          Message m = decode_message(line);
          {
            std::lock_guard lock(mutex_);
            received_.push_back(m);
          }
          action = handler_(m);
        } catch (const ProtocolError& e) {
          action = refuse(e.seq, e.code, e.message);
        }
        if (!action.bytes.empty()) send_all(fd, action.bytes);
        if (action.close) {
          drop(fd, false);
          break;
        }
      }
    }
  }
  for (const auto& [fd, reader] : clients) ::close(fd);
}

}  // namespace gpreempt::client::testing
