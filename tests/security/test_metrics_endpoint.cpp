// gpreemptd's metrics endpoint faces the network: it answers GET only (no request body is read),
// and a flood of idle connections holds a bounded number of the daemon's descriptors (the same
// descriptors its socket needs) instead of one each.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "daemon_rig.h"

namespace gpreempt::testing {
namespace {

int tcp_connect(const std::string& address, bool wait) {
  const auto colon = address.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (wait ? 0 : SOCK_NONBLOCK), 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string http_exchange(const std::string& address, const std::string& request) {
  const int fd = tcp_connect(address, true);
  if (fd < 0) return "";
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  (void)!::write(fd, request.data(), request.size());
  std::string out;
  char buf[8192];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

// The daemon's open sockets: what connections hold. Files its other threads open and close
// meanwhile (discovery's /proc reads) would make a count of every descriptor race.
std::size_t open_descriptors(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code link_ec;
    const auto target = std::filesystem::read_symlink(it->path(), link_ec).string();
    if (!link_ec && target.rfind("socket:", 0) == 0) ++n;
  }
  return n;
}

TEST(MetricsEndpoint, AnswersGetOnlyAndReadsNoBody) {
  DaemonRig rig;
  auto daemon = rig.start_daemon();
  const std::string address = rig.status()["daemon"]["metrics_endpoint"].get<std::string>();
  EXPECT_NE(http_exchange(address, "GET /metrics HTTP/1.0\r\n\r\n").find("200 OK"), std::string::npos);
  // A POST announcing a large body: refused at once, without waiting for (or buffering) it.
  const std::string post = http_exchange(
      address, "POST /metrics HTTP/1.0\r\nContent-Length: 100000000\r\n\r\nxxxx");
  EXPECT_NE(post.find("405"), std::string::npos) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD"), std::string::npos) << post;
  EXPECT_NE(http_exchange(address, "DELETE /metrics HTTP/1.0\r\n\r\n").find("405"), std::string::npos);
}

TEST(MetricsEndpoint, AFloodOfIdleConnectionsHoldsABoundedNumberOfDescriptors) {
  DaemonRig rig;
  auto daemon = rig.start_daemon();
  const std::string address = rig.status()["daemon"]["metrics_endpoint"].get<std::string>();
  const std::size_t before = open_descriptors(daemon->pid());
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = tcp_connect(address, false);
    if (fd >= 0) idle.push_back(fd);
  }
  // It takes connections up to its bound (2 workers, 8 queued, 1 served by the acceptor)...
  EXPECT_TRUE(eventually([&] { return open_descriptors(daemon->pid()) >= before + 10; }));
  // ...and no more while they idle (each is closed by the 2 s read timeout, then the next taken).
  for (int i = 0; i < 20; ++i) {
    const std::size_t during = open_descriptors(daemon->pid());
    EXPECT_LE(during, before + 12) << "before " << before << ", with 100 idle connections " << during;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The socket still answers.
  auto r = rig.ask(message(client::Op::kHello));
  EXPECT_TRUE(r && r->ok);
  for (int fd : idle) ::close(fd);
}

}  // namespace
}  // namespace gpreempt::testing
