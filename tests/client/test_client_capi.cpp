// The gpreemptd client C ABI through libgpreempt.so itself, against a fake gpreemptd: request ids
// (the library's and the caller's), negative errno with the daemon's sentence (clients that require
// the daemon), failing open (no daemon, a daemon restarted under the client, overlapping requests
// from threads), the stats, the options' size rules, the hello struct's size rule, and timeouts.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <map>
#include <memory>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "client_abi_c.h"
#include "fake_daemon.h"
#include "gpreempt/client.h"

namespace gpreempt::client {
namespace {

using testing::Action;
using testing::FakeDaemon;

struct Client {
  gpreempt_client* c = nullptr;
  Client() = default;
  Client& operator=(Client&& o) noexcept {
    gpreempt_client_close(c);
    c = std::exchange(o.c, nullptr);
    return *this;
  }
  ~Client() { gpreempt_client_close(c); }
};

// Captures stderr (the client's warnings) until take(); released also when an assertion returns
// early, so the next test can capture again.
class StderrCapture {
 public:
  StderrCapture() { ::testing::internal::CaptureStderr(); }
  ~StderrCapture() {
    if (!taken_) ::testing::internal::GetCapturedStderr();
  }
  std::string take() {
    taken_ = true;
    return ::testing::internal::GetCapturedStderr();
  }

 private:
  bool taken_ = false;
};

TEST(ClientCAbi, TheLibraryChoosesIdsWhenAskedAndKeepsTheCallersOtherwise) {
  FakeDaemon daemon;
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, &cl.c), 0) << gpreempt_last_error();
  uint64_t a = 0, b = 0, mine = 42;
  ASSERT_EQ(gpreempt_client_request_begin(cl.c, &a), 0);
  ASSERT_EQ(gpreempt_client_request_begin(cl.c, &b), 0);
  ASSERT_EQ(gpreempt_client_request_begin(cl.c, &mine), 0);
  EXPECT_NE(a, b);
  EXPECT_NE(a & (uint64_t{1} << 63), 0u);
  EXPECT_NE(b & (uint64_t{1} << 63), 0u);
  EXPECT_EQ(mine, 42u);
  ASSERT_EQ(gpreempt_client_request_end(cl.c, a), 0);
  ASSERT_EQ(gpreempt_client_expect_request(cl.c, 800), 0);
  const auto got = daemon.received();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].op, Op::kBegin);
  EXPECT_EQ(got[0].request, a);
  EXPECT_EQ(got[1].request, b);
  EXPECT_EQ(got[2].request, 42u);
  EXPECT_EQ(got[3].op, Op::kEnd);
  EXPECT_EQ(got[3].request, a);
  EXPECT_EQ(got[4].op, Op::kExpect);
  EXPECT_EQ(got[4].in_us, 800);
}

TEST(ClientCAbi, AnLlmRequestReportsItsFirstTokenAndItsTokens) {
  FakeDaemon daemon;
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, &cl.c), 0) << gpreempt_last_error();
  uint64_t id = 0;
  ASSERT_EQ(c_one_llm_request(cl.c, 64, &id), 0) << gpreempt_last_error();
  uint64_t mine = 7;
  ASSERT_EQ(gpreempt_client_request_begin(cl.c, &mine), 0);
  ASSERT_EQ(gpreempt_client_request_token(cl.c, mine, 33), 0);
  ASSERT_EQ(gpreempt_client_request_end_tokens(cl.c, mine, 0), 0) << "0: not said";
  const auto got = daemon.received();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[1].op, Op::kToken);
  EXPECT_EQ(got[1].request, id);
  EXPECT_EQ(got[1].tokens, 1u);
  EXPECT_EQ(got[2].op, Op::kEnd);
  EXPECT_EQ(got[2].tokens, 64u);
  EXPECT_EQ(got[4].tokens, 33u);
  EXPECT_EQ(got[5].op, Op::kEnd);
  EXPECT_EQ(got[5].tokens, 0u);
  EXPECT_EQ(gpreempt_client_request_token(cl.c, 7, 0), -EINVAL);
  EXPECT_EQ(gpreempt_client_request_token(cl.c, 0, 1), -EINVAL);
  EXPECT_EQ(gpreempt_client_request_token(nullptr, 7, 1), -EINVAL);
  EXPECT_EQ(gpreempt_client_request_end_tokens(nullptr, 7, 1), -EINVAL);
  EXPECT_EQ(daemon.received().size(), 6u) << "nothing sent for a bad call";
}

TEST(ClientCAbi, TokenCallsWithoutADaemonFailOpen) {
  char dir[] = "/tmp/gpreempt-capi-tokens-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/none.sock";
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(path.c_str(), nullptr, &cl.c), 0) << gpreempt_last_error();
  uint64_t id = 0;
  EXPECT_EQ(c_one_llm_request(cl.c, 12, &id), 0) << gpreempt_last_error();
  struct gpreempt_client_stats st = {};
  st.sz = sizeof st;
  ASSERT_EQ(gpreempt_client_get_stats(cl.c, &st), 0);
  EXPECT_EQ(st.requests_unprotected, 1u);
  EXPECT_EQ(st.requests_open, 0u);
  ::rmdir(dir);
}

TEST(ClientCAbi, InvalidArgumentsFailEinvalAndSendNothing) {
  FakeDaemon daemon;
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, &cl.c), 0);
  uint64_t reserved = (uint64_t{1} << 63) | 5;
  EXPECT_EQ(gpreempt_client_request_begin(cl.c, &reserved), -EINVAL);
  EXPECT_NE(std::string(gpreempt_last_error()).find("bit 63"), std::string::npos);
  EXPECT_EQ(gpreempt_client_request_begin(cl.c, nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_client_request_end(cl.c, 0), -EINVAL);
  EXPECT_EQ(gpreempt_client_expect_request(cl.c, 0), -EINVAL);
  EXPECT_EQ(gpreempt_client_expect_request(cl.c, UINT64_MAX), -EINVAL);
  EXPECT_EQ(gpreempt_client_request_end(nullptr, 1), -EINVAL);
  EXPECT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, nullptr), -EINVAL);
  EXPECT_TRUE(daemon.received().empty());
}

TEST(ClientCAbi, ARefusalIsANegativeErrnoWithTheDaemonsSentence) {
  FakeDaemon daemon([](const Message& m) {
    return FakeDaemon::refuse(m.seq, ErrorCode::kNotPermitted,
                              "pid 99 is in class \"offline\", whose hints do not count");
  });
  Client cl;
  ASSERT_EQ(c_connect_requiring_daemon(daemon.path().c_str(), 0, &cl.c), 0);
  uint64_t id = 0;
  EXPECT_EQ(gpreempt_client_request_begin(cl.c, &id), -EPERM);
  EXPECT_STREQ(gpreempt_last_error(), "pid 99 is in class \"offline\", whose hints do not count");
  EXPECT_EQ(id, 0u) << "the id is written only on success";
}

TEST(ClientCAbi, ConnectFailureNamesThePathWhenTheDaemonIsRequired) {
  gpreempt_client* c = nullptr;
  EXPECT_EQ(c_connect_requiring_daemon("/tmp/gpreempt-nowhere/x.sock", 0, &c), -ENOENT);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(std::string(gpreempt_last_error()).find("/tmp/gpreempt-nowhere/x.sock"), std::string::npos);
}

TEST(ClientCAbi, NullPathMeansGpreemptSocket) {
  FakeDaemon daemon;
  ::setenv("GPREEMPT_SOCKET", daemon.path().c_str(), 1);
  Client cl;
  const int r = gpreempt_client_connect(nullptr, nullptr, &cl.c);
  ::unsetenv("GPREEMPT_SOCKET");
  ASSERT_EQ(r, 0) << gpreempt_last_error();
  uint64_t id = 0;
  EXPECT_EQ(gpreempt_client_request_begin(cl.c, &id), 0);
  EXPECT_EQ(daemon.received().size(), 1u);
}

// A newer caller's struct: this library's fields, then one it does not know.
struct NewerOpts {
  gpreempt_client_opts known;
  uint64_t future;
};

TEST(ClientCAbi, OptionsFollowTheSizeRules) {
  FakeDaemon daemon;
  const char* path = daemon.path().c_str();
  {
    gpreempt_client_opts tiny{};
    tiny.sz = 4;  // ends inside `sz` itself
    gpreempt_client* c = nullptr;
    EXPECT_EQ(gpreempt_client_connect(path, &tiny, &c), -EINVAL);
    EXPECT_EQ(c, nullptr);
    EXPECT_NE(std::string(gpreempt_last_error()).find("gpreempt_client_opts.sz"), std::string::npos);
  }
  {
    NewerOpts newer{};
    newer.known.sz = sizeof(newer);
    newer.future = 1;
    gpreempt_client* c = nullptr;
    EXPECT_EQ(gpreempt_client_connect(path, &newer.known, &c), -E2BIG);
    EXPECT_EQ(c, nullptr);
  }
  {
    NewerOpts newer{};
    newer.known.sz = sizeof(newer);  // larger, but every unknown byte zero: accepted
    Client cl;
    EXPECT_EQ(gpreempt_client_connect(path, &newer.known, &cl.c), 0) << gpreempt_last_error();
  }
  {
    gpreempt_client_opts older{};
    older.sz = sizeof(size_t);  // an older caller without timeout_ms: the default applies
    Client cl;
    EXPECT_EQ(gpreempt_client_connect(path, &older, &cl.c), 0) << gpreempt_last_error();
  }
}

TEST(ClientCAbi, TheTimeoutOptionBoundsEachCall) {
  FakeDaemon daemon([](const Message&) { return Action{}; });
  Client cl;
  ASSERT_EQ(c_connect_requiring_daemon(daemon.path().c_str(), 30, &cl.c), 0) << gpreempt_last_error();
  uint64_t id = 0;
  EXPECT_EQ(gpreempt_client_request_begin(cl.c, &id), -ETIMEDOUT);
  EXPECT_NE(std::string(gpreempt_last_error()).find("30 ms"), std::string::npos) << gpreempt_last_error();

  // Failing open, the same silent daemon costs that request its protection, not the request.
  Client lax;
  ASSERT_EQ(c_connect_with_timeout(daemon.path().c_str(), 30, &lax.c), 0) << gpreempt_last_error();
  StderrCapture capture;
  EXPECT_EQ(gpreempt_client_request_begin(lax.c, &id), 0) << gpreempt_last_error();
  EXPECT_EQ(gpreempt_client_request_end(lax.c, id), 0) << gpreempt_last_error();
  const std::string err = capture.take();
  EXPECT_NE(err.find("30 ms"), std::string::npos) << err;
  gpreempt_client_stats s{};
  ASSERT_EQ(c_stats(lax.c, &s), 0);
  EXPECT_EQ(s.requests_unprotected, 1u);
}

// How many times `part` occurs in `text`.
std::size_t lines_with(const std::string& text, const std::string& part) {
  std::size_t n = 0, at = 0;
  while ((at = text.find(part, at)) != std::string::npos) {
    ++n;
    at += part.size();
  }
  return n;
}

TEST(ClientCAbi, WithoutADaemonRequestsRunUnprotectedCountedWithOneWarning) {
  char tmpl[] = "/tmp/gpreempt-capi-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/gpreemptd.sock";
  Client cl;
  StderrCapture capture;
  ASSERT_EQ(gpreempt_client_connect(path.c_str(), nullptr, &cl.c), 0) << gpreempt_last_error();
  for (int i = 0; i < 4; ++i) {
    uint64_t id = 0;
    ASSERT_EQ(gpreempt_client_expect_request(cl.c, 500), 0) << gpreempt_last_error();
    ASSERT_EQ(gpreempt_client_request_begin(cl.c, &id), 0) << gpreempt_last_error();
    EXPECT_NE(id, 0u);
    ASSERT_EQ(gpreempt_client_request_end(cl.c, id), 0) << gpreempt_last_error();
  }
  const std::string err = capture.take();
  EXPECT_EQ(lines_with(err, "gpreempt: warning:"), 1u) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
  gpreempt_client_stats s{};
  ASSERT_EQ(c_stats(cl.c, &s), 0);
  EXPECT_EQ(s.requests_unprotected, 4u);
  EXPECT_EQ(s.requests_protected, 0u);
  EXPECT_EQ(s.requests_open, 0u);
  EXPECT_EQ(s.flags & GPREEMPT_CLIENT_CONNECTED, 0u);
  // Calls that need the daemon's answer still fail, naming the socket.
  char* json = nullptr;
  EXPECT_EQ(gpreempt_client_status_json(cl.c, &json), -ENOENT);
  EXPECT_NE(std::string(gpreempt_last_error()).find(path), std::string::npos);
  ::rmdir(tmpl);
}

// Two threads with requests open at once on one client while the daemon is destroyed and another
// takes its socket: every call returns 0, each thread's begin and end pair up, and requests are
// protected again on the new daemon.
TEST(ClientCAbi, OverlappingRequestsFromTwoThreadsSurviveADaemonRestart) {
  char tmpl[] = "/tmp/gpreempt-capi-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/gpreemptd.sock";
  auto first = std::make_unique<FakeDaemon>(FakeDaemon::Handler{}, path);
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(path.c_str(), nullptr, &cl.c), 0) << gpreempt_last_error();
  std::atomic<int> failures{0};
  std::atomic<bool> stop{false};
  std::atomic<int> done[2] = {0, 0};
  StderrCapture capture;
  auto work = [&](int t) {
    while (!stop.load()) {
      uint64_t outer = 0, inner = 0;
      if (gpreempt_client_request_begin(cl.c, &outer) != 0) ++failures;
      if (gpreempt_client_request_begin(cl.c, &inner) != 0) ++failures;  // two open from one thread
      if (gpreempt_client_request_end(cl.c, inner) != 0) ++failures;
      if (gpreempt_client_request_end(cl.c, outer) != 0) ++failures;
      ++done[t];
    }
  };
  std::thread a(work, 0), b(work, 1);
  auto wait_rounds = [&](int n) {
    const int a0 = done[0].load(), b0 = done[1].load();
    while (done[0].load() < a0 + n || done[1].load() < b0 + n) std::this_thread::yield();
  };
  wait_rounds(20);
  first.reset();  // the daemon goes away mid-run
  wait_rounds(20);
  auto second = std::make_unique<FakeDaemon>(FakeDaemon::Handler{}, path);
  gpreempt_client_stats s{};
  for (int i = 0; i < 20000; ++i) {  // bounded: the backoff is at most 2 s
    ASSERT_EQ(c_stats(cl.c, &s), 0);
    if ((s.flags & GPREEMPT_CLIENT_CONNECTED) && second->received().size() >= 8) break;
    ::usleep(1000);
  }
  stop = true;
  a.join();
  b.join();
  const std::string err = capture.take();
  EXPECT_EQ(failures.load(), 0) << err;
  ASSERT_EQ(c_stats(cl.c, &s), 0);
  EXPECT_EQ(s.requests_open, 0u);
  EXPECT_EQ(s.reconnects, 1u);
  EXPECT_GT(s.requests_unprotected, 0u);
  EXPECT_GT(s.requests_protected, 0u);
  EXPECT_EQ(s.requests_protected + s.requests_unprotected,
            2u * static_cast<uint64_t>(done[0].load() + done[1].load()));
  EXPECT_EQ(lines_with(err, "cannot be reached"), 1u) << err;
  EXPECT_EQ(lines_with(err, "protected again"), 1u) << err;
  // The new daemon saw whole requests: every end it got was begun on it, and none is left open
  // (the threads ended all theirs).
  std::map<uint64_t, int> open;
  for (const auto& m : second->received()) {
    if (m.op == Op::kBegin) {
      EXPECT_EQ(open[m.request]++, 0) << m.request;
    } else if (m.op == Op::kEnd) {
      EXPECT_EQ(open[m.request]--, 1) << "end of a request never begun here";
    }
  }
  for (const auto& [id, n] : open) EXPECT_EQ(n, 0) << "request " << id << " left open";
  cl = Client{};  // close before the daemon goes
  second.reset();
  ::rmdir(tmpl);
}

TEST(ClientCAbi, StatsFollowTheSizeRule) {
  FakeDaemon daemon;
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, &cl.c), 0);
  uint64_t id = 0;
  ASSERT_EQ(gpreempt_client_request_begin(cl.c, &id), 0);
  gpreempt_client_stats older;
  std::memset(&older, 0xab, sizeof(older));
  older.sz = offsetof(gpreempt_client_stats, requests_open);
  ASSERT_EQ(gpreempt_client_get_stats(cl.c, &older), 0);
  EXPECT_EQ(older.requests_protected, 1u);
  EXPECT_EQ(older.requests_unprotected, 0u);
  EXPECT_EQ(older.requests_open, 0xababababababababu) << "beyond sz: untouched";
  gpreempt_client_stats bad{};
  bad.sz = 2;
  EXPECT_EQ(gpreempt_client_get_stats(cl.c, &bad), -EINVAL);
  EXPECT_EQ(gpreempt_client_get_stats(nullptr, &bad), -EINVAL);
  gpreempt_client_opts unknown{};
  unknown.sz = sizeof(unknown);
  unknown.flags = 1u << 7;
  gpreempt_client* c = nullptr;
  EXPECT_EQ(gpreempt_client_connect(daemon.path().c_str(), &unknown, &c), -EINVAL);
  EXPECT_EQ(c, nullptr);
}

TEST(ClientCAbi, ACProgramBeginsAndEndsARequest) {
  FakeDaemon daemon;
  Client cl;
  ASSERT_EQ(c_connect_with_timeout(daemon.path().c_str(), 0, &cl.c), 0);
  uint64_t id = 0;
  ASSERT_EQ(c_one_request(cl.c, &id), 0);
  const auto got = daemon.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].op, Op::kBegin);
  EXPECT_EQ(got[1].op, Op::kEnd);
  EXPECT_EQ(got[0].request, id);
  EXPECT_EQ(got[1].request, id);
}

nlohmann::ordered_json hello_body() {
  return {{"daemon_version", "0.3.0"}, {"protocol", 1}, {"pid", 1234}, {"class", "online"}, {"may_preempt", true}};
}

TEST(ClientCAbi, HelloFillsOnlyTheFieldsWithinSz) {
  FakeDaemon daemon([](const Message& m) { return FakeDaemon::ok(m.seq, hello_body()); });
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, &cl.c), 0);
  gpreempt_client_info full{};
  full.sz = sizeof(full);
  ASSERT_EQ(gpreempt_client_hello(cl.c, &full), 0) << gpreempt_last_error();
  EXPECT_EQ(full.pid, 1234);
  EXPECT_EQ(full.flags, unsigned{GPREEMPT_CLIENT_MAY_PREEMPT});
  EXPECT_STREQ(full.reason, "");
  EXPECT_STREQ(full.class_name, "online");
  EXPECT_STREQ(full.daemon_version, "0.3.0");

  // An older caller's struct that ends after `flags`: the names are not written.
  gpreempt_client_info older;
  std::memset(&older, 0xab, sizeof(older));
  older.sz = offsetof(gpreempt_client_info, class_name);
  ASSERT_EQ(gpreempt_client_hello(cl.c, &older), 0);
  EXPECT_EQ(older.pid, 1234);
  EXPECT_EQ(static_cast<unsigned char>(older.class_name[0]), 0xab);

  gpreempt_client_info bad{};
  bad.sz = 2;
  EXPECT_EQ(gpreempt_client_hello(cl.c, &bad), -EINVAL);
}

TEST(ClientCAbi, StatusIsTheDaemonsDocument) {
  FakeDaemon daemon([](const Message& m) {
    return FakeDaemon::ok(m.seq, {{"schema_version", 1}, {"gpus", nlohmann::ordered_json::array()}});
  });
  Client cl;
  ASSERT_EQ(gpreempt_client_connect(daemon.path().c_str(), nullptr, &cl.c), 0);
  char* json = nullptr;
  ASSERT_EQ(gpreempt_client_status_json(cl.c, &json), 0) << gpreempt_last_error();
  EXPECT_EQ(nlohmann::json::parse(json)["schema_version"], 1);
  gpreempt_free(json);
}

}  // namespace
}  // namespace gpreempt::client
