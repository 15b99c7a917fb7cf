// A blocking client connection to gpreemptd: one Unix socket, one message in flight, every call
// bounded by a timeout. The C ABI (gpreempt_client_*), the Python `gpreempt.Client`, `gpreempt
// ctl`, `gpreempt top` and `gpreempt doctor` all talk to the daemon through this class; the bytes
// on the wire come only from lib/client/protocol.h.
//
// Errors are gpreempt::Error with an errno code:
//   - connecting: the socket's errno (ENOENT, ECONNREFUSED, EACCES, ...), the message naming the
//     path and saying gpreemptd may not be running;
//   - a refusal by the daemon: its error code mapped by errno_of() below, the message being the
//     daemon's own sentence;
//   - no reply within the timeout: ETIMEDOUT; the daemon closing the connection: ECONNRESET; a
//     reply that is not the protocol (bad JSON, too long, wrong seq): EPROTO. After any of these
//     the connection is unusable (framing may be lost) and every later call fails ENOTCONN.
// Not thread-safe: use one Connection per thread, or serialise calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/protocol.h"

namespace gpreempt::client {

inline constexpr std::chrono::milliseconds kDefaultCallTimeout{5000};
// Sets the hint-reply mode of every new connection (Connection::HintReplies): "deferred" or
// "wait"; unset or empty: wait. Lets an application choose without code changes (the C ABI and
// Python clients connect through this class).
inline constexpr const char* kHintRepliesEnv = "GPREEMPT_HINT_REPLIES";

// The errno a daemon refusal becomes: not_permitted → EPERM, unknown_target → ESRCH,
// unavailable → EAGAIN, bad_request → EINVAL, unsupported_version → EPROTO, internal → EIO.
int errno_of(ErrorCode code);

// What the daemon says about the connecting process (the `hello` result).
struct HelloInfo {
  std::string daemon_version;             // "daemon_version"
  int protocol = 0;                       // "protocol": the version the daemon speaks
  int pid = 0;                            // "pid": this process as the daemon sees it (SO_PEERCRED)
  std::optional<std::string> class_name;  // "class": null when no class matches
  bool may_preempt = false;               // "may_preempt": whether begin/end/expect from here act
  std::string reason;                     // "reason": when !may_preempt, why not
  nlohmann::ordered_json raw;             // the whole result, newer keys included
};

class Connection {
 public:
  // Connects to `path` (empty: default_socket_path(), i.e. $GPREEMPT_SOCKET or
  // kDefaultSocketPath). `timeout` bounds the connect and, until set_timeout(), every call.
  // The hint-reply mode comes from $GPREEMPT_HINT_REPLIES; any other value than "wait",
  // "deferred" or empty is EINVAL.
  static Connection connect(const std::string& path = {},
                            std::chrono::milliseconds timeout = kDefaultCallTimeout);
  // The same without ever waiting: one non-blocking connect(2). A daemon whose listen backlog is
  // full (the only case where connect() would wait) counts as unreachable: EAGAIN. For the hint
  // path's reconnects (HintClient), where a request must not wait for a daemon that is away.
  // `timeout` bounds every later call, as for connect().
  static Connection connect_now(const std::string& path = {},
                                std::chrono::milliseconds timeout = kDefaultCallTimeout);

  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  const std::string& path() const { return path_; }
  bool connected() const { return fd_ >= 0; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Per call: the time from sending a message to its complete reply. Must be > 0.
  void set_timeout(std::chrono::milliseconds timeout);

  // How begin/end/expect wait for the daemon. kWait (the default): each returns once the daemon
  // answered, so a refusal is thrown by the call that caused it. kDeferred: each returns once its
  // line is sent (the daemon acts on it as soon as it reads it); the replies are collected later —
  // whatever has arrived at the next hint, all of them before any other call and in flush() — and
  // a refusal among them is thrown by the next call on this connection, naming the hint refused.
  // kDeferred keeps the daemon's round trip off the caller's path (docs/protocol.md, "Deferred
  // hint replies"); the bytes on the wire are the same in both modes.
  enum class HintReplies { kWait, kDeferred };
  // $GPREEMPT_HINT_REPLIES: nullopt when unset or empty; any other value than "wait" or
  // "deferred" throws EINVAL.
  static std::optional<HintReplies> hint_replies_from_env();
  void set_hint_replies(HintReplies mode) { hint_replies_ = mode; }
  HintReplies hint_replies() const { return hint_replies_; }
  // Wait for the replies of deferred hints still owed; throws the first refusal among them.
  void flush();
  // A refusal of a deferred hint, kept instead of thrown (keep_deferred_refusals(true)): the
  // caller that fails open counts and reports it without losing the hint it is sending now.
  struct DeferredRefusal {
    int code = 0;  // errno_of() of the daemon's error
    std::string message;
    Op op = Op::kBegin;
    uint64_t request = 0;  // kBegin / kEnd / kToken
  };
  void keep_deferred_refusals(bool keep) { keep_deferred_refusals_ = keep; }
  // Every refusal of a deferred hint read so far (kept mode); reads nothing from the socket.
  std::vector<DeferredRefusal> take_deferred_refusals();

  HelloInfo hello();
  // Hints. `request` must be > 0 and unique among this connection's open requests.
  void begin(uint64_t request);
  // `tokens` > 0: the request's output tokens (an LLM request; 0: not said).
  void end(uint64_t request, uint64_t tokens = 0);
  // LLM request `request` has produced `tokens` output tokens so far (>= 1; 1: its first token).
  void token(uint64_t request, uint64_t tokens = 1);
  void expect(int64_t in_us);
  // The status document (docs/protocol.md, `gpreempt ctl status --json`).
  nlohmann::ordered_json status();
  // Operator commands (control permission); each returns the daemon's result object.
  nlohmann::ordered_json suspend(const Target& target, int64_t for_ms);
  nlohmann::ordered_json resume(const Target& target);
  nlohmann::ordered_json reload();

  // Sends `m` (its seq is assigned here) and returns the result of its ok reply; a refusal throws
  // Error(errno_of(code), the daemon's message).
  nlohmann::ordered_json call(Message m);

  // With deferred hints still owed, first waits (at most the call timeout) for their replies, so
  // the daemon has applied them when close returns; refusals are then dropped. The destructor
  // closes.
  void close();

 private:
  // Closes without waiting for anything.
  void drop();
  Connection(int fd, std::string path, std::chrono::milliseconds timeout);
  // connect() and connect_now(): `wait` says whether a connect that cannot finish at once waits.
  static Connection open(const std::string& path, std::chrono::milliseconds timeout, bool wait);
  [[noreturn]] void broken(int code, const std::string& why);
  std::string read_line(std::chrono::steady_clock::time_point deadline);
  void take_received(std::string_view bytes);
  // Reads what the socket holds now into lines_, without waiting.
  void read_available();
  void send_line(const std::string& out, std::chrono::steady_clock::time_point deadline);
  // Sends a begin/end/expect as hint_replies_ says.
  void hint(Message m);
  // Matches the owed replies of deferred hints with the lines read; with `wait`, reads until none
  // is owed. A refusal is kept in deferred_error_.
  void collect_owed(bool wait, std::chrono::steady_clock::time_point deadline);
  // Throws (once) the refusal of a deferred hint.
  void throw_deferred_error();

  int fd_ = -1;
  std::string path_;
  std::chrono::milliseconds timeout_ = kDefaultCallTimeout;
  uint64_t next_seq_ = 1;
  LineReader reader_;
  std::deque<std::string> lines_;  // complete lines read past the last returned one
  HintReplies hint_replies_ = HintReplies::kWait;
  struct Owed {
    uint64_t seq = 0;
    Op op = Op::kBegin;
    uint64_t request = 0;
  };
  std::deque<Owed> owed_;  // deferred hints sent, replies not read yet (in seq order)
  std::optional<std::pair<int, std::string>> deferred_error_;  // errno, message
  bool keep_deferred_refusals_ = false;
  std::vector<DeferredRefusal> kept_refusals_;
};

}  // namespace gpreempt::client
