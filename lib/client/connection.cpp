#include "client/connection.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/error.h"

namespace gpreempt::client {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

std::string not_running_hint(const std::string& path) {
  return "cannot connect to gpreemptd at " + path +
         " (is gpreemptd running? GPREEMPT_SOCKET or --socket names another socket)";
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  // Round up so that a sub-millisecond remainder still waits instead of spinning.
  return static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
}

// Waits for `events` on `fd` until `deadline`; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = remaining_ms(deadline);
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) throw Error(errno, std::string("poll: ") + errno_text(errno));
  }
}

}  // namespace

int errno_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNotPermitted: return EPERM;
    case ErrorCode::kUnknownTarget: return ESRCH;
    case ErrorCode::kUnavailable: return EAGAIN;
    case ErrorCode::kBadRequest: return EINVAL;
    case ErrorCode::kUnsupportedVersion: return EPROTO;
    case ErrorCode::kInternal: return EIO;
  }
  return EIO;
}

std::optional<Connection::HintReplies> Connection::hint_replies_from_env() {
  const char* mode = std::getenv(kHintRepliesEnv);
  if (mode == nullptr || *mode == '\0') return std::nullopt;
  const std::string m = mode;
  if (m == "deferred") return HintReplies::kDeferred;
  if (m == "wait") return HintReplies::kWait;
  throw Error(EINVAL, std::string(kHintRepliesEnv) + "='" + m +
                          "': expected 'wait' or 'deferred' (how begin/end/expect wait for "
                          "gpreemptd's reply)");
}

Connection Connection::connect(const std::string& path, std::chrono::milliseconds timeout) {
  return open(path, timeout, true);
}

Connection Connection::connect_now(const std::string& path, std::chrono::milliseconds timeout) {
  return open(path, timeout, false);
}

Connection Connection::open(const std::string& path_in, std::chrono::milliseconds timeout,
                            bool wait) {
  if (timeout.count() <= 0) throw Error(EINVAL, "the connect timeout must be positive");
  const std::string path = path_in.empty() ? default_socket_path() : path_in;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    throw Error(ENAMETOOLONG, "socket path " + path + " is longer than " +
                                  std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  const auto mode = hint_replies_from_env();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw Error(errno, std::string("socket(AF_UNIX): ") + errno_text(errno));
  Connection c(fd, path, timeout);
  if (mode) c.hint_replies_ = *mode;
  const auto deadline = Clock::now() + timeout;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    // A Unix socket whose backlog is full answers EAGAIN rather than EINPROGRESS.
    if (err != EINPROGRESS && err != EAGAIN) {
      throw Error(err, not_running_hint(path) + ": " + errno_text(err));
    }
    if (!wait) {
      throw Error(EAGAIN, not_running_hint(path) + ": its listen backlog is full");
    }
    if (!wait_for(fd, POLLOUT, deadline)) {
      throw Error(ETIMEDOUT, not_running_hint(path) + ": no answer within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) throw Error(so_error, not_running_hint(path) + ": " + errno_text(so_error));
  }
  return c;
}

Connection::Connection(int fd, std::string path, std::chrono::milliseconds timeout)
    : fd_(fd), path_(std::move(path)), timeout_(timeout) {}

Connection::Connection(Connection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      timeout_(other.timeout_),
      next_seq_(other.next_seq_),
      reader_(std::move(other.reader_)),
      lines_(std::move(other.lines_)),
      hint_replies_(other.hint_replies_),
      owed_(std::move(other.owed_)),
      deferred_error_(std::move(other.deferred_error_)),
      keep_deferred_refusals_(other.keep_deferred_refusals_),
      kept_refusals_(std::move(other.kept_refusals_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    timeout_ = other.timeout_;
    next_seq_ = other.next_seq_;
    reader_ = std::move(other.reader_);
    lines_ = std::move(other.lines_);
    hint_replies_ = other.hint_replies_;
    owed_ = std::move(other.owed_);
    deferred_error_ = std::move(other.deferred_error_);
    keep_deferred_refusals_ = other.keep_deferred_refusals_;
    kept_refusals_ = std::move(other.kept_refusals_);
  }
  return *this;
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (fd_ >= 0 && !owed_.empty()) {
    // Deferred hints: wait (at most the call timeout) until the daemon has read and answered
    // them, so that whoever asks the daemon after this process closed (or exited) sees them
    // applied. A refusal or a broken connection here has nobody left to report to.
    try {
      collect_owed(true, Clock::now() + timeout_);
    } catch (const Error&) {
    }
  }
  drop();
}

void Connection::drop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  owed_.clear();
}

void Connection::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) throw Error(EINVAL, "the call timeout must be positive");
  timeout_ = timeout;
}

void Connection::broken(int code, const std::string& why) {
  drop();
  throw Error(code, "gpreemptd at " + path_ + ": " + why);
}

// What one recv() returned (empty: the daemon closed the connection), split into reply lines.
void Connection::take_received(std::string_view bytes) {
  if (bytes.empty()) {
    broken(ECONNRESET, reader_.pending() > 0 ? "the daemon closed the connection mid-reply"
                                             : "the daemon closed the connection");
  }
  try {
    for (auto& line : reader_.feed(bytes)) lines_.push_back(std::move(line));
  } catch (const ProtocolError& e) {
    broken(EPROTO, "bad reply: " + e.message);
  }
}

std::string Connection::read_line(Clock::time_point deadline) {
  char buf[4096];
  while (lines_.empty()) {
    if (!wait_for(fd_, POLLIN, deadline)) {
      broken(ETIMEDOUT, "no reply within " + std::to_string(timeout_.count()) + " ms");
    }
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      broken(errno, std::string("receive failed: ") + errno_text(errno));
    }
    take_received(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  std::string line = std::move(lines_.front());
  lines_.pop_front();
  return line;
}

void Connection::read_available() {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      broken(errno, std::string("receive failed: ") + errno_text(errno));
    }
    take_received(std::string_view(buf, static_cast<std::size_t>(n)));
  }
}

void Connection::collect_owed(bool wait, Clock::time_point deadline) {
  while (!owed_.empty()) {
    std::string line;
    if (!lines_.empty()) {
      line = std::move(lines_.front());
      lines_.pop_front();
    } else if (wait) {
      line = read_line(deadline);
    } else {
      read_available();
      if (lines_.empty()) return;
      continue;
    }
    Reply reply;
    try {
      reply = decode_reply(line);
    } catch (const ProtocolError& e) {
      broken(EPROTO, "bad reply: " + e.message);
    }
    const Owed o = owed_.front();
    owed_.pop_front();
    if (reply.seq != o.seq) {
      broken(EPROTO, "reply for message " + std::to_string(reply.seq) + " while waiting for " +
                         std::to_string(o.seq));
    }
    if (!reply.ok && keep_deferred_refusals_) {
      kept_refusals_.push_back({errno_of(reply.error), reply.message, o.op, o.request});
    } else if (!reply.ok && !deferred_error_) {
      const std::string what = o.op == Op::kExpect ? std::string("an expect")
                                                   : std::string(to_string(o.op)) + " of request " +
                                                         std::to_string(o.request);
      deferred_error_.emplace(errno_of(reply.error),
                              "gpreemptd refused " + what + " (reply deferred): " + reply.message);
    }
  }
}

void Connection::throw_deferred_error() {
  if (!deferred_error_) return;
  auto e = std::move(*deferred_error_);
  deferred_error_.reset();
  throw Error(e.first, e.second);
}

std::vector<Connection::DeferredRefusal> Connection::take_deferred_refusals() {
  return std::exchange(kept_refusals_, {});
}

void Connection::flush() {
  if (fd_ < 0 && owed_.empty()) {
    throw_deferred_error();
    return;
  }
  collect_owed(true, Clock::now() + timeout_);
  throw_deferred_error();
}

void Connection::hint(Message m) {
  if (hint_replies_ == HintReplies::kWait && owed_.empty()) {
    call(std::move(m));
    return;
  }
  if (fd_ < 0) throw Error(ENOTCONN, "the connection to gpreemptd at " + path_ + " is closed");
  const auto deadline = Clock::now() + timeout_;
  // Whatever has arrived: keeps the socket's receive buffer from filling up with replies.
  collect_owed(hint_replies_ == HintReplies::kWait, deadline);
  throw_deferred_error();
  if (hint_replies_ == HintReplies::kWait) {
    call(std::move(m));
    return;
  }
  m.seq = next_seq_++;
  send_line(encode(m), deadline);
  owed_.push_back({m.seq, m.op, m.request});
}

void Connection::send_line(const std::string& out, Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        if (!wait_for(fd_, POLLOUT, deadline)) {
          broken(ETIMEDOUT, "could not send within " + std::to_string(timeout_.count()) + " ms");
        }
        continue;
      }
      if (errno == EPIPE || errno == ECONNRESET) broken(ECONNRESET, "the daemon closed the connection");
      broken(errno, std::string("send failed: ") + errno_text(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
}

Json Connection::call(Message m) {
  if (fd_ < 0) throw Error(ENOTCONN, "the connection to gpreemptd at " + path_ + " is closed");
  const auto deadline = Clock::now() + timeout_;
  // Replies come in order: those of deferred hints first.
  collect_owed(true, deadline);
  throw_deferred_error();
  m.seq = next_seq_++;
  send_line(encode(m), deadline);
  Reply reply;
  try {
    reply = decode_reply(read_line(deadline));
  } catch (const ProtocolError& e) {
    broken(EPROTO, "bad reply: " + e.message);
  }
  if (reply.seq != m.seq) {
    broken(EPROTO, "reply for message " + std::to_string(reply.seq) + " while waiting for " +
                       std::to_string(m.seq));
  }
  if (!reply.ok) throw Error(errno_of(reply.error), reply.message);
  return std::move(reply.body);
}

HelloInfo Connection::hello() {
  Message m;
  m.op = Op::kHello;
  HelloInfo info;
  info.raw = call(m);
  const Json& r = info.raw;
  if (auto it = r.find("daemon_version"); it != r.end() && it->is_string()) info.daemon_version = *it;
  if (auto it = r.find("protocol"); it != r.end() && it->is_number_integer()) info.protocol = *it;
  if (auto it = r.find("pid"); it != r.end() && it->is_number_integer()) info.pid = *it;
  if (auto it = r.find("class"); it != r.end() && it->is_string()) info.class_name = it->get<std::string>();
  if (auto it = r.find("may_preempt"); it != r.end() && it->is_boolean()) info.may_preempt = *it;
  if (auto it = r.find("reason"); it != r.end() && it->is_string()) info.reason = *it;
  return info;
}

void Connection::begin(uint64_t request) {
  if (request == 0) throw Error(EINVAL, "request ids start at 1");
  Message m;
  m.op = Op::kBegin;
  m.request = request;
  hint(std::move(m));
}

void Connection::end(uint64_t request, uint64_t tokens) {
  if (request == 0) throw Error(EINVAL, "request ids start at 1");
  Message m;
  m.op = Op::kEnd;
  m.request = request;
  m.tokens = tokens;
  hint(std::move(m));
}

void Connection::token(uint64_t request, uint64_t tokens) {
  if (request == 0) throw Error(EINVAL, "request ids start at 1");
  if (tokens == 0) throw Error(EINVAL, "a token report needs at least 1 token");
  Message m;
  m.op = Op::kToken;
  m.request = request;
  m.tokens = tokens;
  hint(std::move(m));
}

void Connection::expect(int64_t in_us) {
  if (in_us <= 0) throw Error(EINVAL, "expect needs a positive in_us, got " + std::to_string(in_us));
  Message m;
  m.op = Op::kExpect;
  m.in_us = in_us;
  hint(std::move(m));
}

Json Connection::status() {
  Message m;
  m.op = Op::kStatus;
  return call(m);
}

namespace {
void check_target(const Target& t) {
  if (t.class_name.has_value() == t.pid.has_value()) {
    throw Error(EINVAL, "a target is exactly one of a class and a pid");
  }
  if (t.class_name && t.class_name->empty()) throw Error(EINVAL, "the class name is empty");
  if (t.pid && *t.pid <= 0) throw Error(EINVAL, "pid " + std::to_string(*t.pid) + " is not a pid");
}
}  // namespace

Json Connection::suspend(const Target& target, int64_t for_ms) {
  check_target(target);
  if (for_ms <= 0) throw Error(EINVAL, "a suspension needs a positive duration");
  Message m;
  m.op = Op::kSuspend;
  m.target = target;
  m.for_ms = for_ms;
  return call(m);
}

Json Connection::resume(const Target& target) {
  check_target(target);
  Message m;
  m.op = Op::kResume;
  m.target = target;
  return call(m);
}

Json Connection::reload() {
  Message m;
  m.op = Op::kReload;
  return call(m);
}

}  // namespace gpreempt::client
