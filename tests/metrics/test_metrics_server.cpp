// The HTTP endpoint, through a real TCP connection on an ephemeral port.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "common/error.h"
#include "metrics/metrics_server.h"
#include "metrics/prometheus_text.h"

namespace gpreemptd {

using gpreempt::Error;
using gpreempt::errno_text;
namespace {

// One HTTP/1.0 request on 127.0.0.1:port; the whole response (headers and body).
std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket: " + errno_text(errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const std::string e = "connect: " + errno_text(errno);
    ::close(fd);
    return e;
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  (void)!::write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

std::string body_of(const std::string& response) {
  const auto p = response.find("\r\n\r\n");
  return p == std::string::npos ? std::string() : response.substr(p + 4);
}

TEST(MetricsServer, ServesTheLatestSnapshotOverHttp) {
  MetricsServer server(parse_listen_address("127.0.0.1:0"));
  ASSERT_GT(server.port(), 0);

  MetricsSnapshot s;
  s.daemon.version = "first";
  server.publish(s);
  std::string r = http_get(server.port(), "/metrics");
  EXPECT_NE(r.find("HTTP/1.1 200"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8"), std::string::npos) << r;
  EXPECT_EQ(body_of(r), render_prometheus_text(s));

  s.daemon.version = "second";
  GpuMetrics g;
  g.gpu_id = 7;
  g.suspend_calls_total = 5;
  s.gpus.push_back(g);
  server.publish(s);
  r = http_get(server.port(), "/metrics");
  EXPECT_EQ(body_of(r), render_prometheus_text(s));
  EXPECT_NE(r.find("gpreempt_suspend_calls_total{gpu=\"7\"} 5\n"), std::string::npos) << r;

  EXPECT_NE(http_get(server.port(), "/nothing").find("HTTP/1.1 404"), std::string::npos);
  server.stop();
  server.stop();  // idempotent
  EXPECT_NE(http_get(server.port(), "/metrics").find("connect:"), std::string::npos);
}

TEST(MetricsServer, BindFailureNamesTheAddress) {
  MetricsServer first(parse_listen_address("127.0.0.1:0"));
  const std::string addr = "127.0.0.1:" + std::to_string(first.port());
  try {
    MetricsServer second(parse_listen_address(addr));
    FAIL() << "a second server bound " << addr;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EADDRINUSE);
    EXPECT_NE(std::string(e.what()).find("cannot listen on " + addr + ": Address already in use"),
              std::string::npos)
        << e.what();
  }
}

TEST(MetricsServer, ListenAddressParsing) {
  auto a = parse_listen_address("127.0.0.1:9464");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9464);
  a = parse_listen_address("[::1]:80");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 80);
  EXPECT_EQ(a.to_string(), "[::1]:80");
  EXPECT_EQ(parse_listen_address(kDefaultMetricsAddress).to_string(), "127.0.0.1:9464");
  for (const char* bad : {"", "9464", "127.0.0.1", ":9464", "host:", "host:65536", "host:-1",
                          "host:12x", "::1:80", "[::1]80", "[::1"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), EINVAL);
      EXPECT_NE(std::string(e.what()).find(std::string("\"") + bad + "\""), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace gpreemptd
