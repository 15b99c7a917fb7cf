#include "sim/protocol/socket_io.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/protocol/messages.h"

namespace gpreempt::sim::protocol {

int send_message(int sock, std::span<const uint8_t> msg, int pass_fd, bool nonblocking) {
  iovec iov{const_cast<uint8_t*>(msg.data()), msg.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (pass_fd >= 0) {
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  for (;;) {
    ssize_t n = ::sendmsg(sock, &mh, MSG_NOSIGNAL | (nonblocking ? MSG_DONTWAIT : 0));
    if (n >= 0) return static_cast<std::size_t>(n) == msg.size() ? 0 : -EMSGSIZE;
    if (errno == EINTR) continue;
    return -errno;
  }
}

int recv_message(int sock, std::vector<uint8_t>& out, int* received_fd, SignalWait signals,
                 const sigset_t* wait_mask) {
  if (received_fd) *received_fd = -1;
  if (signals == SignalWait::kAlwaysEnds) {
    // ppoll(2) returns EINTR after a handler even with SA_RESTART (signal(7)); a stop signal or
    // one without a handler does not end it.
    pollfd p{sock, POLLIN, 0};
    if (::ppoll(&p, 1, nullptr, wait_mask) < 0) return -errno;
  }
  const bool interruptible = signals != SignalWait::kIgnore;
  // Learn the size first: a SEQPACKET message is delivered whole or truncated, never split.
  ssize_t size;
  for (;;) {
    char probe;
    size = ::recv(sock, &probe, 1, MSG_PEEK | MSG_TRUNC);
    if (size >= 0) break;
    if (errno == EINTR && interruptible) return -EINTR;
    if (errno == EINTR) continue;
    return errno == ECONNRESET ? -ECONNRESET : -errno;
  }
  if (size == 0) {
    // Either the peer hung up or it sent an empty message; both are a dead peer here.
    char probe;
    (void)::recv(sock, &probe, 1, MSG_DONTWAIT);
    return -ECONNRESET;
  }
  if (static_cast<std::size_t>(size) > kMaxMessage) {
    char probe;
    (void)::recv(sock, &probe, 1, 0);  // discard it
    return -EMSGSIZE;
  }
  out.resize(static_cast<std::size_t>(size));
  iovec iov{out.data(), out.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n;
  for (;;) {
    n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n >= 0) break;
    if (errno == EINTR) continue;
    return -errno;
  }
  out.resize(static_cast<std::size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && received_fd) {
      std::memcpy(received_fd, CMSG_DATA(c), sizeof(int));
    }
  }
  return 0;
}

int connect_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return -ENAMETOOLONG;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return -errno;
  for (;;) {
    if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return s;
    if (errno == EINTR) continue;
    int e = errno;
    ::close(s);
    return -e;
  }
}

}  // namespace gpreempt::sim::protocol
