// A stand-in for gpreemptd in client tests and the hint benchmark: a thread serving a Unix socket
// in a private temporary directory, decoding each line with lib/client/protocol and answering what
// the test's handler says — a proper reply, raw bytes (a broken or overlong reply), silence (a
// timeout) or a hang-up (a daemon dying mid-reply). Lines that do not decode are refused as the
// real daemon refuses them.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/protocol.h"

namespace gpreempt::client::testing {

struct Action {
  std::string bytes;   // sent as is (an encoded reply, or anything); empty: send nothing
  bool close = false;  // then hang up this connection
};

class FakeDaemon {
 public:
  using Handler = std::function<Action(const Message&)>;

  // `handler` runs on the server thread. The default answers every message ok with an empty result.
  explicit FakeDaemon(Handler handler = {});
  // Serves `path` (in a directory the test owns) instead of a private one: a daemon restarted on
  // the socket of one that was destroyed. The destructor removes the socket, not the directory.
  FakeDaemon(Handler handler, std::string path);
  ~FakeDaemon();
  FakeDaemon(const FakeDaemon&) = delete;
  FakeDaemon& operator=(const FakeDaemon&) = delete;

  const std::string& path() const { return path_; }
  // Every message decoded so far, in arrival order.
  std::vector<Message> received() const;
  // Connections that have hung up (the client closed) so far.
  int hangups() const;

  static Action reply(const Reply& r) { return {encode(r), false}; }
  static Action ok(uint64_t seq, nlohmann::ordered_json body = nlohmann::ordered_json::object()) {
    return reply(ok_reply(seq, std::move(body)));
  }
  static Action refuse(uint64_t seq, ErrorCode code, std::string message) {
    return reply(error_reply(seq, code, std::move(message)));
  }

 private:
  void start();
  void serve();

  Handler handler_;
  std::string dir_;
  std::string path_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: the destructor wakes the server thread through it
  mutable std::mutex mutex_;
  std::vector<Message> received_;
  int hangups_ = 0;
  std::thread thread_;
};

}  // namespace gpreempt::client::testing
