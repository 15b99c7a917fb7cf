// The Prometheus endpoint of gpreemptd: GET /metrics on a local TCP address, served from the
// server's own threads with the latest published snapshot. Other methods are answered 405 before
// any body is read, bodies are bounded, and so are the connections held open at once (the daemon's
// descriptors are also its socket's). The daemon's loop never waits for a
// scraper: publish() only swaps a pointer under a mutex, and rendering happens on the scrape.
//
//   MetricsServer server(parse_listen_address("127.0.0.1:9464"));  // binds now, or throws
//   server.publish(snapshot);                                      // as often as the daemon likes
//   server.stop();                                                 // or let the destructor do it
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "metrics/metrics_snapshot.h"

namespace httplib {
class Server;
}

namespace gpreemptd {

inline constexpr const char* kDefaultMetricsAddress = "127.0.0.1:9464";
// Request bodies are read at most this far (a scrape has none).
inline constexpr std::size_t kMaxRequestBodyBytes = 4096;

struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0", a name
  int port = 0;      // 0: the kernel picks one (tests); MetricsServer::port() tells which
  // "host:port", with brackets around an IPv6 host.
  std::string to_string() const;
};

// "HOST:PORT" or "[IPV6]:PORT" (port 0–65535). Throws gpreempt::Error(EINVAL) naming the text and
// what was expected.
ListenAddress parse_listen_address(std::string_view text);

class MetricsServer {
 public:
  // Binds `address` and starts serving. Throws gpreempt::Error with the errno and a message naming
  // the address ("metrics: cannot listen on 127.0.0.1:9464: Address already in use") when it
  // cannot. Until the first publish(), /metrics serves an empty snapshot's text.
  explicit MetricsServer(const ListenAddress& address);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The snapshot the next scrape renders. Thread-safe.
  void publish(MetricsSnapshot snapshot);

  // The bound port (the real one when the address asked for port 0).
  int port() const { return port_; }
  const ListenAddress& address() const { return address_; }

  // Closes the listening socket and joins the serving threads; a scrape in progress finishes
  // first. Idempotent; the destructor calls it.
  void stop();

 private:
  std::shared_ptr<const MetricsSnapshot> latest() const;

  ListenAddress address_;
  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::shared_ptr<const MetricsSnapshot> snapshot_;
};

}  // namespace gpreemptd
