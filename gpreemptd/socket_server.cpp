#include "socket_server.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "common/error.h"
#include "process_facts_reader.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5 (include/uapi/asm-generic/socket.h)
#endif

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

// Why `dir` is no place for a root daemon's socket ("" when it is): whoever may rename or write
// into the socket's directory, or any directory above it, can put their own socket or a symlink
// where clients and the daemon expect gpreemptd's. Each directory must be owned by root or the
// daemon's own user, and not writable by group or others unless sticky (as /tmp: then nobody but
// the owner may remove or rename the daemon's entry).
std::string untrusted_directory(const std::filesystem::path& dir) {
  const uid_t self = ::geteuid();
  for (std::filesystem::path d = dir;; d = d.parent_path()) {
    struct stat st {};
    if (::lstat(d.c_str(), &st) != 0) return d.string() + ": " + errno_text(errno);
    if (!S_ISDIR(st.st_mode)) return d.string() + " is not a directory";
    if (st.st_uid != 0 && st.st_uid != self)
      return d.string() + " is owned by uid " + std::to_string(st.st_uid) +
             ", who could replace the socket: use a directory owned by root";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
      return d.string() + " is writable by its group or by everyone (mode " +
             [&] {
               char m[8];
               std::snprintf(m, sizeof m, "%04o", st.st_mode & 07777);
               return std::string(m);
             }() +
             ") without the sticky bit, so others could replace the socket: remove that write "
             "permission or use another directory";
    if (d == d.root_path() || d.parent_path() == d) break;
  }
  return "";
}

// Creates the parent directory (0755) if needed and checks it, refuses when another daemon
// answers on `path`, replaces a stale socket file, binds and listens: the listening fd. Throws
// std::runtime_error saying what failed and on which path.
int open_listener(const std::string& path) {
  address_of(path);  // the length check, before anything is created
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    const mode_t old = ::umask(022);
    std::filesystem::create_directories(dir, ec);
    ::umask(old);
    if (ec)
      throw std::runtime_error("cannot create the socket's directory " + dir.string() + ": " +
                               ec.message());
  }
  // The checked directory is the one bound in: symlinks above it are resolved first.
  const std::filesystem::path real = std::filesystem::canonical(dir, ec);
  if (ec)
    throw std::runtime_error("cannot listen on " + path + ": " + dir.string() + ": " + ec.message());
  if (std::string why = untrusted_directory(real); !why.empty())
    throw std::runtime_error("cannot listen on " + path + ": " + why);
  const std::string bound = (real / std::filesystem::path(path).filename()).string();
  const sockaddr_un a = address_of(bound);
  struct stat st {};
  if (::lstat(bound.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error(path +
                               " exists and is not a socket: remove it or choose another --socket");
    if (someone_listens(a))
      throw std::runtime_error("another gpreemptd already listens on " + path +
                               " (stop it first, or choose another --socket)");
    ::unlink(bound.c_str());  // stale: its daemon died without removing it
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
  // The file is born 0666 (anyone may connect; what a peer may do is decided per message). A
  // chmod by path after bind would follow whatever the path names by then. The umask is the
  // process's: no other thread creates files while the daemon binds.
  const mode_t old = ::umask(0111);
  const int bound_ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int bind_errno = errno;
  ::umask(old);
  if (bound_ok != 0 || ::listen(fd, 128) != 0) {
    const int e = bound_ok != 0 ? bind_errno : errno;
    ::close(fd);
    throw std::runtime_error("cannot listen on " + path + ": " + errno_text(e));
  }
  return fd;
}

// One reply line to a peer refused at accept, if its socket takes it now; never waits.
void refuse(int fd, const std::string& why) {
  const std::string line = client::encode(client::error_reply(0, client::ErrorCode::kUnavailable, why));
  (void)!::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

std::vector<gid_t> peer_groups(int fd) {
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      return groups;
    }
    if (errno != ERANGE) break;
    groups.resize(len / sizeof(gid_t) + 1);  // len: what it needs
  }
  return {};
}

}  // namespace

SocketServer::SocketServer(gpreempt::EventLoop& loop, std::string path, Handler handler,
                           OnClose on_close, SocketLimits limits)
    : loop_(loop),
      path_(std::move(path)),
      handler_(std::move(handler)),
      on_close_(std::move(on_close)),
      limits_(std::move(limits)) {
  listen_fd_ = open_listener(path_);
  reopen_spare();
  listen_watch_ = loop_.watch(listen_fd_, [this] { accept_all(); });
  idle_timer_ = loop_.add_timer([this] { close_idle(); });
  set_limits(limits_);
}

void SocketServer::set_limits(SocketLimits limits) {
  limits_ = std::move(limits);
  // Checked at a quarter of the timeout: a connection idles at most 1.25 times it.
  loop_.arm_every(idle_timer_, std::max<std::chrono::nanoseconds>(limits_.idle_timeout / 4,
                                                                   std::chrono::milliseconds(10)));
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
  loop_.unwatch(idle_timer_);
  loop_.unwatch(listen_watch_);
  ::close(listen_fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
  ::unlink(path_.c_str());
}

void SocketServer::reopen_spare() {
  if (spare_fd_ < 0) spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void SocketServer::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      admit(fd);
      continue;
    }
    if (errno == EMFILE || errno == ENFILE) {
      // The pending peer keeps the listener readable: unless it is taken off the queue the
      // level-triggered loop wakes for it again at once, forever. The spare descriptor makes room
      // to accept it and close it.
      ++counters_.refused_no_descriptor;
      if (counters_.refused_no_descriptor == 1 || counters_.refused_no_descriptor % 1000 == 0)
        spdlog::warn("accept on {}: {} ({} connections open, {} refused so far); refusing",
                     path_, errno_text(errno), connections_.size(),
                     counters_.refused_no_descriptor);
      if (spare_fd_ >= 0) {
        ::close(spare_fd_);
        spare_fd_ = -1;
      }
      const int victim = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (victim >= 0)
        refuse(victim, "gpreemptd has no file descriptor left for this connection; try again later");
      reopen_spare();
      if (victim >= 0) continue;
      return;  // still none (another thread took it): the next wake-up tries again
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
      spdlog::warn("accept on {}: {}", path_, errno_text(errno));
    if (errno == ECONNABORTED || errno == EINTR) continue;
    return;
  }
}

bool SocketServer::admit(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    spdlog::warn("SO_PEERCRED: {}; connection refused", errno_text(errno));
    ::close(fd);
    return false;
  }
  std::size_t& held = per_uid_[cred.uid];
  if (held >= limits_.max_connections_per_uid) {
    ++counters_.refused_per_uid_cap;
    if (counters_.refused_per_uid_cap == 1 || counters_.refused_per_uid_cap % 1000 == 0)
      spdlog::warn("uid {} (pid {}) holds {} connections, the most one uid may: refused ({} so far)",
                   cred.uid, cred.pid, held, counters_.refused_per_uid_cap);
    refuse(fd, "uid " + std::to_string(cred.uid) + " already holds " + std::to_string(held) +
                   " connections to gpreemptd, the most one uid may ([daemon] "
                   "max_connections_per_uid)");
    return false;
  }
  // The connecting process itself, not whichever holds its pid later.
  int pidfd = -1;
  len = sizeof pidfd;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) {
    pidfd = -1;
    // Before Linux 6.5: the pid as it is now; a pid reused between connect and accept is the
    // residual risk (docs/gpreemptd.md). Any other error means the peer is gone already.
    if (errno == ENOPROTOOPT)
      pidfd = static_cast<int>(::syscall(SYS_pidfd_open, cred.pid, 0));
    if (pidfd < 0 && (errno == EMFILE || errno == ENFILE)) {
      ++counters_.refused_no_descriptor;
      refuse(fd, "gpreemptd has no file descriptor left for this connection; try again later");
      return false;
    }
  }
  Peer peer{cred.pid, cred.uid, cred.gid, peer_groups(fd), std::nullopt};
  if (pidfd >= 0) {
    const auto key = read_process_key(limits_.proc_root, cred.pid);
    // Still alive after the read: the pid was this process's throughout, so was the stat file.
    pollfd p{pidfd, POLLIN, 0};
    if (key && ::poll(&p, 1, 0) == 0) peer.start_time_ticks = key->start_time_ticks;
  }
  if (!peer.start_time_ticks) ++counters_.unidentified;
  const uint64_t id = next_id_++;
  Connection& c = connections_[id];
  c.fd = fd;
  c.pidfd = pidfd;
  c.peer = std::move(peer);
  c.last_received = Clock::now();
  c.watch = loop_.watch(fd, [this, id] { readable(id); });
  ++held;
  ++counters_.accepted;
  spdlog::debug("connection {} from pid {} uid {}{}", id, cred.pid, cred.uid,
                c.peer.start_time_ticks ? "" : " (process not identified: it exited)");
  return true;
}

bool SocketServer::send(uint64_t id, const std::string& bytes) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return false;
  it->second.out += bytes;
  return flush(id);
}

bool SocketServer::flush(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return false;
  Connection& c = it->second;
  std::size_t off = 0;
  while (off < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + off, c.out.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_connection(id, true);  // the peer is gone
    return false;
  }
  c.out.erase(0, off);
  if (c.out.size() > limits_.max_output_bytes) {
    // It does not read what it asked for: nobody else waits for it.
    ++counters_.dropped_slow_reader;
    spdlog::warn("pid {} (uid {}) does not read its replies ({} bytes unread): disconnected",
                 c.peer.pid, c.peer.uid, c.out.size());
    close_connection(id, true);
    return false;
  }
  if (c.out.empty() && c.draining) {
    close_connection(id, true);
    return false;
  }
  if (!c.out.empty() && !c.waiting_writable) {
    c.waiting_writable = true;
    loop_.set_on_writable(c.watch, [this, id] { writable(id); });
  } else if (c.out.empty() && c.waiting_writable) {
    c.waiting_writable = false;
    loop_.set_on_writable(c.watch, nullptr);
  }
  return true;
}

void SocketServer::writable(uint64_t id) {
  flush(id);
}

void SocketServer::readable(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  if (it->second.draining) {  // watched for writability only: a hang-up or an error
    close_connection(id, true);
    return;
  }
  const auto received = Clock::now();
  char buf[8192];
  ssize_t n = ::recv(it->second.fd, buf, sizeof buf, 0);
  if (n == 0 && !it->second.out.empty()) {
    // `echo '{...}' | socat - UNIX-CONNECT:...` shuts its side down after the request: its
    // replies still go out, then the connection closes.
    it->second.draining = true;
    it->second.waiting_writable = true;
    loop_.set_on_writable(it->second.watch, [this, id] { writable(id); }, false);
    return;
  }
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    close_connection(id, true);
    return;
  }
  if (n < 0) return;
  it->second.last_received = received;
  std::vector<std::string> lines;
  try {
    lines = it->second.reader.feed(std::string_view(buf, static_cast<std::size_t>(n)));
  } catch (const client::ProtocolError& e) {
    send(id, client::encode(client::error_reply(e.seq, e.code, e.message)));
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
    if (!send(id, client::encode(reply))) return;
    // The handler may have run events that closed nothing, but look the connection up again.
    it = connections_.find(id);
    if (it == connections_.end()) return;
  }
}

void SocketServer::close_idle() {
  const auto now = Clock::now();
  std::vector<uint64_t> idle;
  for (const auto& [id, c] : connections_)
    if (now - c.last_received >= limits_.idle_timeout) idle.push_back(id);
  for (uint64_t id : idle) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    ++counters_.closed_idle;
    spdlog::info("connection of pid {} (uid {}) idle for {} s: closed", it->second.peer.pid,
                 it->second.peer.uid,
                 std::chrono::duration_cast<std::chrono::seconds>(now - it->second.last_received)
                     .count());
    close_connection(id, true);
  }
}

void SocketServer::close_connection(uint64_t id, bool notify) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  const Peer peer = it->second.peer;
  loop_.unwatch(it->second.watch);
  ::close(it->second.fd);
  if (it->second.pidfd >= 0) ::close(it->second.pidfd);
  connections_.erase(it);
  if (auto u = per_uid_.find(peer.uid); u != per_uid_.end() && --u->second == 0) per_uid_.erase(u);
  if (notify && on_close_) on_close_(id, peer);
}

bool SocketServer::peer_exited(uint64_t connection) const {
  auto it = connections_.find(connection);
  if (it == connections_.end() || it->second.pidfd < 0) return true;
  pollfd p{it->second.pidfd, POLLIN, 0};  // a pidfd turns readable when its process exits
  return ::poll(&p, 1, 0) != 0;
}

}  // namespace gpreemptd
