#include "metrics/metrics_server.h"

#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <vector>

#include "common/error.h"
#include "metrics/prometheus_text.h"

namespace gpreemptd {

using gpreempt::Error;
using gpreempt::errno_text;

std::string ListenAddress::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

ListenAddress parse_listen_address(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Error(EINVAL, "metrics address \"" + std::string(text) + "\": " + why +
                             " (expected HOST:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)");
  };
  ListenAddress a;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) throw bad("no ']' after the IPv6 address");
    a.host = std::string(text.substr(1, close - 1));
    if (close + 1 >= text.size() || text[close + 1] != ':') throw bad("no ':PORT' after ']'");
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) throw bad("no port");
    a.host = std::string(text.substr(0, colon));
    if (a.host.find(':') != std::string::npos) throw bad("an IPv6 address needs brackets");
    port_text = text.substr(colon + 1);
  }
  if (a.host.empty()) throw bad("no host (use 0.0.0.0 to listen on every address)");
  int port = -1;
  const auto r = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || r.ec != std::errc() || r.ptr != port_text.data() + port_text.size() ||
      port < 0 || port > 65535)
    throw bad("port \"" + std::string(port_text) + "\" is not a number from 0 to 65535");
  a.port = port;
  return a;
}

namespace {

// httplib's bind reports only success. Binding the same address once more on our own socket gives
// the errno to show (EADDRINUSE, EACCES, EADDRNOTAVAIL) or the resolver's message.
std::string why_bind_fails(const ListenAddress& a) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(a.port);
  if (int rc = ::getaddrinfo(a.host.c_str(), service.c_str(), &hints, &res); rc != 0)
    return std::string("cannot resolve the host: ") + ::gai_strerror(rc);
  std::string why = "the address cannot be bound";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      why = errno_text(errno);
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const int rc = ::bind(fd, ai->ai_addr, ai->ai_addrlen);
    const int err = errno;
    ::close(fd);
    if (rc != 0) why = errno_text(err);
  }
  ::freeaddrinfo(res);
  return why;
}

// httplib's ThreadPool queues every accepted connection without bound, each holding a descriptor
// until a worker gets to it: a flood of idle connections would take the daemon's descriptors (and
// with them its socket's). Here a connection beyond the queue's room is served on the accepting
// thread itself, which meanwhile accepts nothing: the kernel's backlog holds the rest, and at most
// workers + kMaxQueued + 1 connections are open at once.
class BoundedPool : public httplib::TaskQueue {
 public:
  static constexpr std::size_t kWorkers = 2;
  static constexpr std::size_t kMaxQueued = 8;

  BoundedPool() {
    for (std::size_t i = 0; i < kWorkers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~BoundedPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    {
      std::unique_lock lock(mutex_);
      if (!stopping_ && jobs_.size() < kMaxQueued) {
        jobs_.push_back(std::move(fn));
        cond_.notify_one();
        return;
      }
    }
    fn();  // full: the accepting thread serves (and closes) it
  }

  void shutdown() override {
    {
      std::unique_lock lock(mutex_);
      if (stopping_ && threads_.empty()) return;
      stopping_ = true;
    }
    cond_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex_);
        cond_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and nothing left to close
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
    }
  }

  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address)
    : address_(address),
      server_(std::make_unique<httplib::Server>()),
      snapshot_(std::make_shared<const MetricsSnapshot>()) {
  // Two workers are plenty for a scraper or two, and a daemon should not idle eight threads; the
  // connections waiting for them are bounded (BoundedPool).
  server_->new_task_queue = [] { return new BoundedPool(); };
  // A scrape is a GET with no body: anything else is refused before a body is read, and no body
  // is buffered beyond a few KB whatever the method.
  server_->set_payload_max_length(kMaxRequestBodyBytes);
  server_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("gpreemptd: the metrics endpoint answers GET only\n", "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  });
  // One request per connection and short timeouts, so stop() never waits on an idle keep-alive
  // connection or a client that connected and said nothing.
  server_->set_keep_alive_max_count(1);
  // httplib's default also sets SO_REUSEPORT, with which a second daemon on the same address would
  // bind without error and take half of the scrapes. SO_REUSEADDR alone still allows a restart
  // while old connections sit in TIME_WAIT.
  server_->set_socket_options([](int sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_read_timeout(2, 0);
  server_->set_write_timeout(2, 0);
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const auto snapshot = latest();
    try {
      res.set_content(render_prometheus_text(*snapshot), kPrometheusContentType);
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(std::string("gpreemptd: cannot render the metrics: ") + e.what() + "\n",
                      "text/plain; charset=utf-8");
    }
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpreemptd: metrics are at /metrics\n", "text/plain; charset=utf-8");
  });

  if (address_.port == 0) {
    port_ = server_->bind_to_any_port(address_.host);
    if (port_ <= 0)
      throw Error(EADDRNOTAVAIL, "metrics: cannot listen on " + address_.to_string() + ": " +
                                     why_bind_fails(address_));
  } else {
    if (!server_->bind_to_port(address_.host, address_.port)) {
      const std::string why = why_bind_fails(address_);
      throw Error(why.find("in use") != std::string::npos ? EADDRINUSE : EADDRNOTAVAIL,
                  "metrics: cannot listen on " + address_.to_string() + ": " + why +
                      " (set another address with metrics.listen in the config)");
    }
    port_ = address_.port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() only acts on a running server: wait until the loop has started, so a stop()
  // right after construction cannot be lost and leave join() waiting forever.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::publish(MetricsSnapshot snapshot) {
  auto next = std::make_shared<const MetricsSnapshot>(std::move(snapshot));
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot_ = std::move(next);
}

std::shared_ptr<const MetricsSnapshot> MetricsServer::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_;
}

void MetricsServer::stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace gpreemptd
