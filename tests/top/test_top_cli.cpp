// `gpreempt top --once` against a fake gpreemptd: a Unix socket answering `status` with a fixed
// document through lib/client/protocol.h, as the daemon does.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "cli_run.h"
#include "client/protocol.h"

namespace gt = gpreempt::testing;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

class FakeDaemon {
 public:
  explicit FakeDaemon(Json status) : status_(std::move(status)) {
    path_ = (fs::temp_directory_path() / ("gpreempt_top_" + std::to_string(::getpid()) + ".sock")).string();
    ::unlink(path_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path_.copy(a.sun_path, sizeof a.sun_path - 1);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 4) != 0)
      ADD_FAILURE() << "cannot listen on " << path_;
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeDaemon() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  const std::string& path() const { return path_; }
  int status_calls() const { return calls_; }

 private:
  void serve() {
    for (;;) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      gpreempt::client::LineReader reader;
      char buf[4096];
      ssize_t n;
      while ((n = ::read(c, buf, sizeof buf)) > 0) {
        for (const auto& line : reader.feed(std::string_view(buf, static_cast<std::size_t>(n)))) {
          const auto m = gpreempt::client::decode_message(line);
          std::string reply;
          if (m.op == gpreempt::client::Op::kStatus) {
            ++calls_;
            reply = gpreempt::client::encode(gpreempt::client::ok_reply(m.seq, status_));
          } else {
            reply = gpreempt::client::encode(gpreempt::client::ok_reply(m.seq));
          }
          (void)!::write(c, reply.data(), reply.size());
        }
      }
      ::close(c);
    }
  }

  Json status_;
  std::string path_;
  int fd_ = -1;
  std::atomic<int> calls_{0};
  std::thread thread_;
};

Json small_status() {
  return Json::parse(R"({"schema_version": 2,
    "daemon": {"pid": 99, "version": "0.1.0", "config_path": null, "socket_path": "/run/x.sock", "uptime_s": 10},
    "classes": [{"name": "online", "priority": 10, "triggers": ["hint"]}],
    "gpus": [{"gpu_id": 63420, "can_suspend": true, "reason": null, "suspended_now": 1,
              "suspensions_total": 5, "suspended_s_total": 2.5, "grace_us": 100,
              "processes": [{"pid": 7, "start_time_ticks": 1, "class": "online", "cmdline": "serve",
                             "queues": 2, "suspended": false, "open_requests": 1}],
              "online_request_latency_ms": {"count": 3, "p50": 1.0, "p99": 2.0}}]})");
}

}  // namespace

TEST(TopCli, OnceDrawsOneFrameFromTheDaemon) {
  FakeDaemon daemon(small_status());
  auto r = gt::run_gpreempt("top --once --socket " + daemon.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 63420 (f7bc)  can suspend  grace 100 us  suspended now 1\n"
                       "  suspensions/s 0.5  offline progress 75.0 %  (since start)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  7    online  2       no         1         serve\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << "escape codes on a pipe";
  EXPECT_EQ(daemon.status_calls(), 1);

  r = gt::run_gpreempt("top --once --json --socket " + daemon.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j.begin().key(), "schema_version");
  EXPECT_EQ(j["gpus"][0]["suspensions_per_s"], 0.5);
}

TEST(TopCli, LiveViewWithoutATerminalPrintsFramesUntilStopped) {
  FakeDaemon daemon(small_status());
  // Not a TTY: one plain frame per refresh. SIGTERM ends it cleanly (exit 0).
  auto r = gt::run_shell(gt::gpreempt_exe() + " top --interval 0.1 --socket " + daemon.path() +
                         " & p=$!; sleep 3; kill -TERM $p; wait $p");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(daemon.status_calls(), 2);
  // The second frame covers the time between two fetches.
  EXPECT_NE(r.out.find("(last "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

TEST(TopCli, OnceWithoutADaemonFails) {
  auto r = gt::run_gpreempt("top --once --socket /nonexistent/gpreemptd.sock");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/gpreemptd.sock"), std::string::npos) << r.err;
  EXPECT_EQ(gt::run_gpreempt("top --interval 0.01 --once").exit_code, 2);
}
