// The control and hint socket: a Unix stream socket speaking the NDJSON protocol of
// lib/client/protocol.h (the only encoder/decoder of it). Peers are identified by SO_PEERCRED,
// never by what they say. The socket is mode 0666 — anyone may connect and send hints, which
// count only when the peer's class allows; state-changing ops are checked by the handler.
//
// Every line gets exactly one reply, in order. A line too long or a broken stream closes the
// connection; on_close runs for every connection that ends (the daemon ends its open requests).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "client/protocol.h"
#include "common/event_loop.h"

namespace gpreemptd {

struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class SocketServer {
 public:
  using Received = std::chrono::steady_clock::time_point;
  using Handler = std::function<gpreempt::client::Reply(uint64_t connection, const Peer& peer,
                                                        const gpreempt::client::Message& message,
                                                        Received received)>;
  using OnClose = std::function<void(uint64_t connection, const Peer& peer)>;

  // Creates the parent directory (0755) if needed, refuses to start when another daemon answers on
  // `path`, replaces a stale socket file, binds and listens. Throws std::runtime_error saying what
  // failed and on which path.
  SocketServer(gpreempt::EventLoop& loop, std::string path, Handler handler, OnClose on_close);
  ~SocketServer();  // closes every connection (without on_close) and removes the socket file
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Listen on `path` instead (a reloaded config): the new socket is bound first, so when that
  // fails (std::runtime_error, as the constructor) the old one keeps listening untouched. Open
  // connections stay open; the old socket file is removed.
  void rebind(std::string path);

  const std::string& path() const { return path_; }
  std::size_t connections() const { return connections_.size(); }

 private:
  struct Connection {
    int fd = -1;
    Peer peer;
    gpreempt::EventLoop::Id watch = 0;
    gpreempt::client::LineReader reader;
  };
  void accept_all();
  void readable(uint64_t id);
  void close_connection(uint64_t id, bool notify);
  bool send(Connection& c, const std::string& bytes);

  gpreempt::EventLoop& loop_;
  std::string path_;
  Handler handler_;
  OnClose on_close_;
  int listen_fd_ = -1;
  gpreempt::EventLoop::Id listen_watch_ = 0;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Connection> connections_;
};

}  // namespace gpreemptd
