#include "socket_server.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "common/error.h"

namespace gpreemptd {

namespace client = gpreempt::client;
using gpreempt::errno_text;

namespace {

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    throw std::runtime_error("socket path " + path + " is longer than " +
                             std::to_string(sizeof a.sun_path - 1) + " bytes");
  path.copy(a.sun_path, path.size());
  return a;
}

// Whether a daemon answers on `path` (a stale file from a killed daemon does not).
bool someone_listens(const sockaddr_un& a) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return live;
}

// Creates the parent directory (0755) if needed, refuses when another daemon answers on `path`,
// replaces a stale socket file, binds and listens: the listening fd. Throws std::runtime_error
// saying what failed and on which path.
int open_listener(const std::string& path) {
  const sockaddr_un a = address_of(path);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec)
      throw std::runtime_error("cannot create the socket's directory " + dir.string() + ": " +
                               ec.message());
    ::chmod(dir.c_str(), 0755);
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error(path +
                               " exists and is not a socket: remove it or choose another --socket");
    if (someone_listens(a))
      throw std::runtime_error("another gpreemptd already listens on " + path +
                               " (stop it first, or choose another --socket)");
    ::unlink(path.c_str());  // stale: its daemon died without removing it
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error("cannot listen on " + path + ": " + errno_text(e));
  }
  // Hints are open to anyone whose class allows them; what a peer may do is decided per message.
  ::chmod(path.c_str(), 0666);
  return fd;
}

}  // namespace

SocketServer::SocketServer(gpreempt::EventLoop& loop, std::string path, Handler handler,
                           OnClose on_close)
    : loop_(loop),
      path_(std::move(path)),
      handler_(std::move(handler)),
      on_close_(std::move(on_close)) {
  listen_fd_ = open_listener(path_);
  listen_watch_ = loop_.watch(listen_fd_, [this] { accept_all(); });
}

void SocketServer::rebind(std::string path) {
  if (path == path_) return;
  const int fd = open_listener(path);  // throws: the old socket stays as it was
  accept_all();  // peers that connected but were not accepted yet would be reset by the close
  loop_.unwatch(listen_watch_);
  ::close(listen_fd_);
  ::unlink(path_.c_str());
  listen_fd_ = fd;
  path_ = std::move(path);
  listen_watch_ = loop_.watch(listen_fd_, [this] { accept_all(); });
}

SocketServer::~SocketServer() {
  std::vector<uint64_t> ids;
  for (const auto& [id, c] : connections_) ids.push_back(id);
  for (uint64_t id : ids) close_connection(id, false);
  loop_.unwatch(listen_watch_);
  ::close(listen_fd_);
  ::unlink(path_.c_str());
}

void SocketServer::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        spdlog::warn("accept on {}: {}", path_, errno_text(errno));
      return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      spdlog::warn("SO_PEERCRED: {}; connection refused", errno_text(errno));
      ::close(fd);
      continue;
    }
    const uint64_t id = next_id_++;
    Connection& c = connections_[id];
    c.fd = fd;
    c.peer = {cred.pid, cred.uid, cred.gid};
    c.watch = loop_.watch(fd, [this, id] { readable(id); });
    spdlog::debug("connection {} from pid {} uid {}", id, cred.pid, cred.uid);
  }
}

bool SocketServer::send(Connection& c, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(c.fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A peer that does not read its replies must not stall the loop for everyone else: wait a
      // little for room, then give up on it.
      pollfd p{c.fd, POLLOUT, 0};
      if (::poll(&p, 1, 100) > 0) continue;
    }
    return false;
  }
  return true;
}

void SocketServer::readable(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  const auto received = std::chrono::steady_clock::now();
  char buf[8192];
  ssize_t n = ::recv(it->second.fd, buf, sizeof buf, 0);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    close_connection(id, true);
    return;
  }
  if (n < 0) return;
  std::vector<std::string> lines;
  try {
    lines = it->second.reader.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  } catch (const client::ProtocolError& e) {
    send(it->second, client::encode(client::error_reply(e.seq, e.code, e.message)));
    close_connection(id, true);
    return;
  }
  for (const auto& line : lines) {
    client::Reply reply;
    try {
      const client::Message m = client::decode_message(line);
      reply = handler_(id, it->second.peer, m, received);
    } catch (const client::ProtocolError& e) {
      reply = client::error_reply(e.seq, e.code, e.message);
    } catch (const std::exception& e) {
      reply = client::error_reply(0, client::ErrorCode::kInternal, e.what());
    }
    // The handler may have run events that closed nothing, but look the connection up again.
    it = connections_.find(id);
    if (it == connections_.end()) return;
    if (!send(it->second, client::encode(reply))) {
      close_connection(id, true);
      return;
    }
  }
}

void SocketServer::close_connection(uint64_t id, bool notify) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  const Peer peer = it->second.peer;
  loop_.unwatch(it->second.watch);
  ::close(it->second.fd);
  connections_.erase(it);
  if (notify && on_close_) on_close_(id, peer);
}

}  // namespace gpreemptd
