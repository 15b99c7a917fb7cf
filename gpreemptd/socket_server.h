// The control and hint socket: a Unix stream socket speaking the NDJSON protocol of
// lib/client/protocol.h (the only encoder/decoder of it). Peers are identified when the connection
// is accepted and that identity stays the connection's for its life (never re-read from a pid that
// may have been reused): SO_PEERCRED's uid and gid, SO_PEERGROUPS' supplementary groups, and the
// connecting process itself as a pidfd (SO_PEERPIDFD, or pidfd_open of the peer's pid on kernels
// before 6.5) plus its start time read while the pidfd was held. The socket is mode 0666 — anyone
// may connect and send hints, which count only when the peer's class allows; what a peer may do
// or see is decided per message by the handler.
//
// A root daemon must not be stalled or exhausted by one local user, so the server bounds what a
// peer can hold (docs/gpreemptd.md, "The socket's limits"): connections per uid, an idle timeout,
// replies written without blocking into a bounded buffer (a peer that does not read its replies is
// dropped, nobody waits for it), and a spare descriptor so that running out of descriptors refuses
// the newest connection instead of spinning the level-triggered loop.
//
// Every line gets exactly one reply, in order. A line too long or a broken stream closes the
// connection; on_close runs for every connection that ends (the daemon ends its open requests).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/protocol.h"
#include "common/event_loop.h"

namespace gpreemptd {

struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // Supplementary groups of the connecting process when it connected (SO_PEERGROUPS).
  std::vector<gid_t> groups;
  // The connecting process's start time (field 22 of /proc/PID/stat), read at accept while its
  // pidfd was held and checked alive afterwards, so it is that process's and no later holder's of
  // the pid. nullopt: the process could not be identified (it had exited before the accept).
  std::optional<uint64_t> start_time_ticks;
};

struct SocketLimits {
  // Open connections one uid may hold (root included: many root containers share uid 0).
  std::size_t max_connections_per_uid = 128;
  // A connection that sends nothing for this long is closed (its open requests end with it).
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(10);
  // Replies a peer has not read yet, at most; beyond it the peer is dropped.
  std::size_t max_output_bytes = 4 << 20;
  // Where the peer's stat file is read at accept.
  std::string proc_root = "/proc";
};

// What the server has refused or dropped since it started (status, metrics).
struct SocketCounters {
  uint64_t accepted = 0;
  uint64_t refused_per_uid_cap = 0;  // a uid at max_connections_per_uid connected again
  uint64_t refused_no_descriptor = 0;  // accept failed for want of a descriptor (EMFILE, ENFILE)
  uint64_t dropped_slow_reader = 0;  // more than max_output_bytes of replies unread
  uint64_t closed_idle = 0;
  uint64_t unidentified = 0;  // accepted without a start time (Peer::start_time_ticks)
};

class SocketServer {
 public:
  using Received = std::chrono::steady_clock::time_point;
  using Handler = std::function<gpreempt::client::Reply(uint64_t connection, const Peer& peer,
                                                        const gpreempt::client::Message& message,
                                                        Received received)>;
  using OnClose = std::function<void(uint64_t connection, const Peer& peer)>;

  // Creates the parent directory (0755) if needed and refuses a parent that someone other than
  // root (or the daemon's own user) could replace or write into without the sticky bit; refuses to
  // start when another daemon answers on `path`, replaces a stale socket file, binds (the file
  // created 0666 through the umask, never chmod-ed by path) and listens. Throws std::runtime_error
  // saying what failed and on which path.
  SocketServer(gpreempt::EventLoop& loop, std::string path, Handler handler, OnClose on_close,
               SocketLimits limits = {});
  ~SocketServer();  // closes every connection (without on_close) and removes the socket file
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Listen on `path` instead (a reloaded config): the new socket is bound first, so when that
  // fails (std::runtime_error, as the constructor) the old one keeps listening untouched. Open
  // connections stay open; the old socket file is removed.
  void rebind(std::string path);
  // New limits apply from the next connection, message or idle check on.
  void set_limits(SocketLimits limits);

  const std::string& path() const { return path_; }
  std::size_t connections() const { return connections_.size(); }
  const SocketCounters& counters() const { return counters_; }
  // Whether the process that opened `connection` has exited (or was never identified): its pid
  // may name another process by now.
  bool peer_exited(uint64_t connection) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    int pidfd = -1;  // the connecting process; -1 when it could not be had
    Peer peer;
    gpreempt::EventLoop::Id watch = 0;
    gpreempt::client::LineReader reader;
    std::string out;  // replies the kernel has not taken yet
    bool waiting_writable = false;
    // The peer has finished sending (end of file) and its replies are still being written: the
    // connection closes once they are.
    bool draining = false;
    Clock::time_point last_received;
  };
  void accept_all();
  // A descriptor accepted; false when it was refused (closed).
  bool admit(int fd);
  void readable(uint64_t id);
  void writable(uint64_t id);
  void close_connection(uint64_t id, bool notify);
  // Queues `bytes` and writes what the kernel takes now; false when the peer was dropped.
  bool send(uint64_t id, const std::string& bytes);
  // false: the connection failed or holds too much unread (then closed, on_close run).
  bool flush(uint64_t id);
  void close_idle();
  void reopen_spare();

  gpreempt::EventLoop& loop_;
  std::string path_;
  Handler handler_;
  OnClose on_close_;
  SocketLimits limits_;
  int listen_fd_ = -1;
  int spare_fd_ = -1;  // closed to accept (and refuse) one peer when descriptors run out
  gpreempt::EventLoop::Id listen_watch_ = 0;
  gpreempt::EventLoop::Id idle_timer_ = 0;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Connection> connections_;
  std::map<uid_t, std::size_t> per_uid_;
  SocketCounters counters_;
};

}  // namespace gpreemptd
