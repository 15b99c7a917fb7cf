// gpreemptd's parts that need no simulated machine: the facts read from /proc, the control
// permission, the socket server's framing and peer credentials.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "control_permission.h"
#include "process_facts_reader.h"
#include "socket_server.h"

namespace gpreemptd {
namespace {

TEST(ProcessFactsReader, ReadsThisProcess) {
  ::setenv("GPREEMPT_CLASS", "online", 1);
  auto f = read_process_facts("/proc", ::getpid());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->key.pid, ::getpid());
  EXPECT_GT(f->key.start_time_ticks, 0u);
  EXPECT_EQ(f->ppid, ::getppid());
  EXPECT_EQ(f->uid, ::getuid());
  ASSERT_FALSE(f->cmdline.empty());
  EXPECT_NE(f->exe.find("test_gpreemptd_unit"), std::string::npos) << f->exe;
  EXPECT_FALSE(f->cgroups.empty());
  // environ is the process's initial environment: setenv does not change it, but the variables
  // the test runner set are there.
  EXPECT_EQ(read_process_key("/proc", ::getpid()), f->key);
  auto chain = read_ancestors("/proc", *f);
  if (::getppid() > 1) {
    ASSERT_FALSE(chain.empty());
    EXPECT_EQ(chain[0].key.pid, ::getppid());
  }
}

TEST(ProcessFactsReader, AGoneProcessHasNoFacts) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int st;
  ::waitpid(child, &st, 0);
  EXPECT_FALSE(read_process_facts("/proc", child));
  EXPECT_FALSE(read_process_key("/proc", child));
}

TEST(ControlPermission, RootMayAndOthersAreToldWhy) {
  EXPECT_FALSE(control_refusal({1, 0, 0}, "", "reload", "/proc"));
  auto why = control_refusal({1, 1000, 1000}, "", "reload", "/proc");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("uid 1000"), std::string::npos);
  EXPECT_NE(why->find("control_group"), std::string::npos);
  auto missing = control_refusal({1, 1000, 1000}, "no-such-group-here", "reload", "/proc");
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find("does not exist"), std::string::npos);
  // gid 0's group (root) as the control group: a peer whose primary gid is 0 may.
  EXPECT_FALSE(control_refusal({::getpid(), 1000, 0}, "root", "reload", "/proc"));
}

TEST(SocketServer, AnswersEachLineAndKnowsThePeer) {
  gpreempt::EventLoop loop;
  const std::string path = "/tmp/gpreemptd-unit-" + std::to_string(::getpid()) + "/s.sock";
  Peer seen;
  int closed = 0;
  SocketServer server(
      loop, path,
      [&](uint64_t, const Peer& p, const gpreempt::client::Message& m, SocketServer::Received) {
        seen = p;
        return gpreempt::client::ok_reply(m.seq, {{"op", gpreempt::client::to_string(m.op)}});
      },
      [&](uint64_t, const Peer&) {
        ++closed;
        loop.stop();
      });
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            static_cast<std::filesystem::perms>(0666));
  std::string got;
  std::thread client([&] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string two =
        "{\"v\":1,\"seq\":1,\"op\":\"hello\"}\n{\"v\":1,\"seq\":2,\"op\":\"status\"}\nnot json\n";
    ASSERT_EQ(::write(fd, two.data(), two.size()), static_cast<ssize_t>(two.size()));
    char buf[4096];
    while (std::count(got.begin(), got.end(), '\n') < 3) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
  });
  loop.run();
  client.join();
  EXPECT_EQ(seen.pid, ::getpid());
  EXPECT_EQ(seen.uid, ::getuid());
  EXPECT_EQ(closed, 1);
  EXPECT_NE(got.find("\"seq\":1,\"ok\":true,\"result\":{\"op\":\"hello\"}"), std::string::npos)
      << got;
  EXPECT_NE(got.find("\"seq\":2,\"ok\":true"), std::string::npos) << got;
  EXPECT_NE(got.find("\"error\":\"bad_request\""), std::string::npos) << got;
}

TEST(SocketServer, RefusesToReplaceALiveDaemonButReplacesAStaleSocket) {
  gpreempt::EventLoop loop;
  const std::string path = "/tmp/gpreemptd-unit-" + std::to_string(::getpid()) + "/live.sock";
  auto noop = [](uint64_t, const Peer&, const gpreempt::client::Message& m,
                 SocketServer::Received) { return gpreempt::client::ok_reply(m.seq); };
  {
    SocketServer first(loop, path, noop, nullptr);
    EXPECT_THROW(SocketServer(loop, path, noop, nullptr), std::runtime_error);
  }
  // A stale socket file (its daemon was killed): bind a socket and close it without unlinking.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
  EXPECT_NO_THROW(SocketServer(loop, path, noop, nullptr));
}

}  // namespace
}  // namespace gpreemptd
