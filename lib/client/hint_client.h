// The hint side of a gpreemptd client, failing open: a request marked with begin/end runs whether or
// not gpreemptd is there. The C ABI (gpreempt_client_*), the Python `gpreempt.Client` /
// `gpreempt.online_request()` and `gpreempt-workload online --hint` mark requests through it.
//
// Why: a hint only asks the daemon to make room for a request; the request itself does not need
// the daemon. A daemon that is down, restarting or being upgraded must cost the request its
// protection, never the request. So, unless the caller asks for the daemon (require_daemon):
//   - a hint that cannot reach the daemon (no socket, connection refused or reset, no reply within
//     the call timeout) or that it refuses is dropped; the request runs unprotected and is counted
//     (stats()). One warning says protection is lost, one says it is back — never one per request;
//     the first refusal is reported once, later ones only counted.
//   - Reconnecting is lazy, on the hint path, with exponential backoff: while the daemon is away a
//     hint makes at most one non-blocking connect(2) per backoff interval (retry_min doubling up to
//     retry_max) and never waits in it (connect_now: a Unix-socket connect either completes or
//     fails at once; a full listen backlog counts as a failure). So a request pays, over a daemon's
//     absence, at most one syscall per interval. No thread: nothing runs while the application does
//     not mark requests, and a forked child inherits nothing running.
//   - A connection the daemon closed (a restart, or its idle timeout) is replaced at once by one
//     more non-blocking attempt before the hint is given up: a daemon that is there costs nothing.
//   - A daemon that accepts the connection but does not answer is the one case that costs time:
//     with "wait" hint replies (the default), that one hint waits up to the call timeout before the
//     client gives the connection up; "deferred" hint replies never wait for the daemon.
//   - A request begun on a connection that is gone is not ended on the next one (the new daemon
//     never saw it); a request still open when the daemon went away finishes unprotected.
// With require_daemon, every hint fails with the connection's error instead (gpreempt::Error, as
// Connection documents), and the constructor fails when the daemon cannot be reached.
//
// Not thread-safe: callers serialise (the C ABI and the Python binding hold a mutex per client).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "client/connection.h"
#include "common/error.h"

namespace gpreempt::client {

inline constexpr std::chrono::milliseconds kRetryMin{50};
inline constexpr std::chrono::milliseconds kRetryMax{2000};

struct HintClientOptions {
  std::string path;  // empty: default_socket_path()
  std::chrono::milliseconds timeout = kDefaultCallTimeout;  // connect of non-hint calls, each call
  std::optional<Connection::HintReplies> hint_replies;      // nullopt: $GPREEMPT_HINT_REPLIES
  bool require_daemon = false;  // fail closed: errors instead of unprotected requests
  // Where the two warnings (and the first refusal) go; empty: one "gpreempt: warning: ..." line on
  // stderr.
  std::function<void(const std::string&)> warn;
  std::chrono::milliseconds retry_min = kRetryMin;  // first backoff interval, > 0
  std::chrono::milliseconds retry_max = kRetryMax;  // its bound, >= retry_min
};

struct HintStats {
  uint64_t requests_protected = 0;    // begins the daemon took (or, deferred, that were sent)
  uint64_t requests_unprotected = 0;  // begins dropped: daemon away, or it refused
  uint64_t requests_open = 0;         // begun and not ended yet, protected or not
  uint64_t reconnects = 0;            // connections made after being without one
  bool connected = false;
};

class HintClient {
 public:
  // Tries to connect once, without waiting. Throws Error: EINVAL for bad options or a bad
  // $GPREEMPT_HINT_REPLIES, ENAMETOOLONG for a path too long; with require_daemon, the connect
  // error (connect() with the timeout).
  explicit HintClient(HintClientOptions options);

  // Request `request` starts (> 0, not open already: EINVAL). True when the daemon was told.
  // `require_daemon` overrides the client's setting for this request (a request that must not run
  // unprotected). A failure to tell the daemon throws only when the daemon is required.
  bool begin(uint64_t request, std::optional<bool> require_daemon = std::nullopt);
  // Request `request` finished; `tokens` > 0: its output tokens (an LLM request, for its TPOT).
  // Sent only when it was begun on the current connection.
  void end(uint64_t request, uint64_t tokens = 0);
  // LLM request `request` has produced `tokens` output tokens so far (>= 1, else EINVAL; 1: its
  // first token, for its TTFT). Sent only when it was begun on the current connection, as end;
  // fails open as end does (a report lost costs the daemon a measure, never the request).
  void token(uint64_t request, uint64_t tokens = 1);
  // A request starts in about `in_us` (> 0). True when the daemon was told.
  bool expect(int64_t in_us);

  HintStats stats() const;
  const std::string& path() const { return path_; }
  bool connected() const { return conn_.has_value() && conn_->connected(); }
  bool require_daemon() const { return options_.require_daemon; }
  Connection::HintReplies hint_replies() const { return hint_replies_; }

  // A call that needs the daemon's answer (hello, status, operator commands, flush): connects
  // first if needed (waiting up to the timeout), then runs fn(connection). Errors propagate in
  // every mode: there is no request to protect.
  template <class F>
  auto call(F&& fn) {
    Connection& c = connection_for_call();
    try {
      return fn(c);
    } catch (const Error&) {
      if (!c.connected()) lost_connection();
      throw;
    }
  }

  void close();

 private:
  using Clock = std::chrono::steady_clock;

  Connection& connection_for_call();
  // A connection for a hint: the current one, or a new one when the backoff allows (`force`: now,
  // waiting as connect() does). Null when there is none.
  Connection* connection_for_hint(bool force);
  void adopt(Connection c);
  void lost_connection();
  // Sends a hint with `send(connection)`. True when sent (and, with "wait" replies, taken); false
  // when it fails open; throws when `strict`.
  template <class Send>
  bool deliver(bool strict, Send&& send);
  // Sends an end or a token report of a request begun on the current connection (with `strict`,
  // on any connection, connecting if needed): failures fail open unless `strict`.
  template <class Send>
  void send_for_request(Send&& send, bool strict);
  // A hint failed with `e`: rethrows when `strict`, else warns (once) and returns.
  void hint_failed(const Error& e, bool strict);
  void take_refusals();
  void refused(const std::string& why);
  // Counts a request that runs unprotected, then note_lost(true).
  void unprotected();
  // Gives the "unprotected" warning when the daemon is away and it was not given yet.
  // `counted_now`: the request just counted is the first of this absence.
  void note_lost(bool counted_now);
  void warn(const std::string& line);

  HintClientOptions options_;
  std::string path_;
  Connection::HintReplies hint_replies_ = Connection::HintReplies::kWait;
  std::optional<Connection> conn_;
  uint64_t epoch_ = 0;  // counts connections made; an open request remembers its epoch
  bool warned_lost_ = false;     // the "unprotected" warning was given and "back" not yet
  bool warned_refused_ = false;  // the first refusal was reported
  Clock::time_point next_retry_{};
  std::chrono::milliseconds retry_interval_{0};
  std::unordered_map<uint64_t, uint64_t> open_;  // request → epoch it was told on (0: unprotected)
  HintStats stats_;
  uint64_t unprotected_at_loss_ = 0;  // requests_unprotected when the warning was given
  std::string last_failure_;          // why the daemon could not be reached, for the warning
};

}  // namespace gpreempt::client
