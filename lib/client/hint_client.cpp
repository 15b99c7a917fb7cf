#include "client/hint_client.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "common/error.h"

namespace gpreempt::client {

namespace {

// Errors that say the caller's input is wrong, not that the daemon is away: never failed open.
bool usage_error(int code) { return code == EINVAL || code == ENAMETOOLONG; }

std::string hint_name(Op op, uint64_t request) {
  if (op == Op::kExpect) return "an expect";
  return std::string("the ") + to_string(op) + " of request " + std::to_string(request);
}

}  // namespace

HintClient::HintClient(HintClientOptions options) : options_(std::move(options)) {
  if (options_.timeout.count() <= 0) throw Error(EINVAL, "the call timeout must be positive");
  if (options_.retry_min.count() <= 0 || options_.retry_max < options_.retry_min) {
    throw Error(EINVAL, "the reconnect backoff needs 0 < retry_min <= retry_max");
  }
  path_ = options_.path.empty() ? default_socket_path() : options_.path;
  hint_replies_ = options_.hint_replies ? *options_.hint_replies
                                        : Connection::hint_replies_from_env().value_or(
                                              Connection::HintReplies::kWait);
  if (options_.require_daemon) {
    adopt(Connection::connect(path_, options_.timeout));
  } else {
    connection_for_hint(false);
  }
  // The constructor's connection is the first one, not a reconnect.
  stats_.reconnects = 0;
}

void HintClient::adopt(Connection c) {
  c.set_hint_replies(hint_replies_);
  c.keep_deferred_refusals(!options_.require_daemon);
  conn_.emplace(std::move(c));
  ++epoch_;
  ++stats_.reconnects;
  retry_interval_ = std::chrono::milliseconds(0);
  if (warned_lost_) {
    warned_lost_ = false;
    warn("connected to gpreemptd at " + path_ + " again: online requests are protected again (" +
         std::to_string(stats_.requests_unprotected - unprotected_at_loss_) +
         " ran unprotected meanwhile)");
  }
}

void HintClient::lost_connection() {
  conn_.reset();
  // A daemon that restarts is usually back within moments: the next hint may try at once.
  next_retry_ = Clock::now();
  retry_interval_ = std::chrono::milliseconds(0);
}

Connection* HintClient::connection_for_hint(bool force) {
  if (connected()) return &*conn_;
  if (conn_) lost_connection();
  if (!force && Clock::now() < next_retry_) return nullptr;
  try {
    adopt(force ? Connection::connect(path_, options_.timeout)
                : Connection::connect_now(path_, options_.timeout));
    return &*conn_;
  } catch (const Error& e) {
    if (usage_error(e.code())) throw;
    retry_interval_ = std::clamp(retry_interval_ * 2, options_.retry_min, options_.retry_max);
    next_retry_ = Clock::now() + retry_interval_;
    last_failure_ = e.what();
    if (force) throw;
    return nullptr;
  }
}

Connection& HintClient::connection_for_call() {
  if (connected()) return *conn_;
  if (conn_) lost_connection();
  adopt(Connection::connect(path_, options_.timeout));
  return *conn_;
}

void HintClient::warn(const std::string& line) {
  if (options_.warn) {
    options_.warn(line);
  } else {
    std::fprintf(stderr, "gpreempt: warning: %s\n", line.c_str());
  }
}

void HintClient::hint_failed(const Error& e, bool strict) {
  if (strict) throw e;
  if (conn_ && conn_->connected()) {
    refused(e.what());
    return;
  }
  if (conn_) lost_connection();
  last_failure_ = e.what();
}

void HintClient::refused(const std::string& why) {
  if (warned_refused_) return;
  warned_refused_ = true;
  warn("gpreemptd at " + path_ + " refused a hint (" + why +
       "): the requests it refuses run unprotected; later refusals are counted, not reported");
}

void HintClient::unprotected() {
  ++stats_.requests_unprotected;
  note_lost(true);
}

void HintClient::note_lost(bool counted_now) {
  if (connected() || warned_lost_) return;
  warned_lost_ = true;
  unprotected_at_loss_ = stats_.requests_unprotected - (counted_now ? 1 : 0);
  warn("gpreemptd at " + path_ + " cannot be reached (" + last_failure_ +
       "): online requests run unprotected until it is back; the client reconnects on later "
       "requests, without waiting");
}

void HintClient::take_refusals() {
  if (!conn_) return;
  for (auto& r : conn_->take_deferred_refusals()) {
    if (r.op == Op::kBegin) {
      if (auto it = open_.find(r.request); it != open_.end()) it->second = 0;
      if (stats_.requests_protected > 0) --stats_.requests_protected;
      ++stats_.requests_unprotected;
    }
    refused(hint_name(r.op, r.request) + ": " + r.message);
  }
}

template <class Send>
bool HintClient::deliver(bool strict, Send&& send) {
  for (int attempt = 0;; ++attempt) {
    const uint64_t epoch = epoch_;
    Connection* c = connection_for_hint(strict);
    if (c == nullptr) return false;
    try {
      send(*c);
      take_refusals();
      return true;
    } catch (const Error& e) {
      // The daemon closed a connection this client had held (it restarted, or closed an idle
      // connection): one immediate attempt on a new connection — non-blocking when failing open —
      // before the request is given up, so a daemon that is there costs no request.
      if (attempt == 0 && epoch == epoch_ && e.code() == ECONNRESET && !c->connected()) {
        last_failure_ = e.what();
        lost_connection();
        continue;
      }
      hint_failed(e, strict);
      return false;
    }
  }
}

bool HintClient::begin(uint64_t request, std::optional<bool> require_daemon) {
  if (request == 0) throw Error(EINVAL, "request ids start at 1");
  if (open_.count(request) != 0) {
    throw Error(EINVAL, "request " + std::to_string(request) + " is already open on this client");
  }
  const bool strict = require_daemon.value_or(options_.require_daemon);
  take_refusals();
  if (deliver(strict, [&](Connection& c) { c.begin(request); })) {
    open_[request] = epoch_;
    ++stats_.requests_protected;
    return true;
  }
  open_[request] = 0;
  unprotected();
  return false;
}

void HintClient::end(uint64_t request, uint64_t tokens) {
  if (request == 0) throw Error(EINVAL, "request ids start at 1");
  const bool strict = options_.require_daemon;
  if (auto it = open_.find(request); it != open_.end()) {
    const uint64_t epoch = it->second;
    open_.erase(it);
    // Begun unprotected, or on a connection that is gone: the daemon has nothing to end.
    if (epoch == 0 || epoch != epoch_ || !connected()) return;
  } else if (!connected() && !strict) {
    return;
  }
  send_for_request([&](Connection& c) { c.end(request, tokens); }, strict);
}

void HintClient::token(uint64_t request, uint64_t tokens) {
  if (request == 0) throw Error(EINVAL, "request ids start at 1");
  if (tokens == 0) throw Error(EINVAL, "a token report needs at least 1 token");
  const bool strict = options_.require_daemon;
  if (auto it = open_.find(request); it != open_.end()) {
    // Begun unprotected, or on a connection that is gone: the daemon does not know the request.
    if (it->second == 0 || it->second != epoch_ || !connected()) return;
  } else if (!strict) {
    return;  // not begun here: nothing for the daemon to measure
  }
  send_for_request([&](Connection& c) { c.token(request, tokens); }, strict);
}

template <class Send>
void HintClient::send_for_request(Send&& send, bool strict) {
  take_refusals();
  Connection* c = strict ? &connection_for_call() : &*conn_;
  try {
    send(*c);
    take_refusals();
  } catch (const Error& e) {
    // No warning for an end or a token report: its request ran; a lost daemon is reported by the
    // next begin.
    hint_failed(e, strict);
  }
}

bool HintClient::expect(int64_t in_us) {
  if (in_us <= 0) {
    throw Error(EINVAL, "expect needs a positive in_us, got " + std::to_string(in_us));
  }
  take_refusals();
  if (deliver(options_.require_daemon, [&](Connection& c) { c.expect(in_us); })) return true;
  note_lost(false);
  return false;
}

HintStats HintClient::stats() const {
  HintStats s = stats_;
  s.requests_open = open_.size();
  s.connected = connected();
  return s;
}

void HintClient::close() {
  if (conn_) conn_->close();
  conn_.reset();
  open_.clear();
}

}  // namespace gpreempt::client
