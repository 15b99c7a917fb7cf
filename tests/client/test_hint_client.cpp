// client::HintClient, the hint client that fails open: no daemon, a daemon that goes away and comes
// back on the same socket, refusals, the backoff, and the strict mode (require_daemon), against
// the fake gpreemptd.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "client/hint_client.h"
#include "common/error.h"
#include "fake_daemon.h"

namespace gpreempt::client {
namespace {

using namespace std::chrono_literals;
using testing::Action;
using testing::FakeDaemon;

// A directory for a socket that several fake daemons serve in turn.
struct SocketDir {
  std::string dir;
  SocketDir() {
    char tmpl[] = "/tmp/gpreempt-hint-client-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
  }
  ~SocketDir() { ::rmdir(dir.c_str()); }
  std::string socket() const { return dir + "/gpreemptd.sock"; }
};

struct Warnings {
  std::vector<std::string> lines;
  std::size_t count(const std::string& part) const {
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(part) != std::string::npos ? 1 : 0;
    return n;
  }
};

HintClientOptions options(const std::string& path, Warnings& w) {
  HintClientOptions o;
  o.path = path;
  o.warn = [&w](const std::string& line) { w.lines.push_back(line); };
  return o;
}

std::vector<std::pair<Op, uint64_t>> hints(const FakeDaemon& d) {
  std::vector<std::pair<Op, uint64_t>> out;
  for (const auto& m : d.received()) out.emplace_back(m.op, m.request);
  return out;
}

TEST(HintClient, WithoutADaemonRequestsRunUnprotectedWithOneWarning) {
  SocketDir dir;
  Warnings w;
  HintClient c(options(dir.socket(), w));
  EXPECT_FALSE(c.connected());
  EXPECT_TRUE(w.lines.empty()) << "nothing to warn about before a request";
  for (uint64_t id = 1; id <= 5; ++id) {
    EXPECT_FALSE(c.begin(id));
    EXPECT_FALSE(c.expect(100));
    c.end(id);
  }
  const auto s = c.stats();
  EXPECT_EQ(s.requests_unprotected, 5u);
  EXPECT_EQ(s.requests_protected, 0u);
  EXPECT_EQ(s.requests_open, 0u);
  EXPECT_FALSE(s.connected);
  ASSERT_EQ(w.lines.size(), 1u) << "one warning, not one per request";
  EXPECT_NE(w.lines[0].find(dir.socket()), std::string::npos) << w.lines[0];
  EXPECT_NE(w.lines[0].find("unprotected"), std::string::npos) << w.lines[0];
}

TEST(HintClient, TokenReportsWithoutADaemonFailOpenAsEndDoes) {
  SocketDir dir;
  Warnings w;
  HintClient c(options(dir.socket(), w));
  EXPECT_FALSE(c.begin(1));
  EXPECT_NO_THROW(c.token(1));      // its first token
  EXPECT_NO_THROW(c.token(1, 17));  // its decode's progress
  EXPECT_NO_THROW(c.end(1, 40));
  EXPECT_NO_THROW(c.token(9)) << "a request never begun: nothing to tell, nothing thrown";
  const auto s = c.stats();
  EXPECT_EQ(s.requests_unprotected, 1u) << "counted once, as the request it is";
  EXPECT_EQ(s.requests_open, 0u);
  EXPECT_EQ(w.lines.size(), 1u) << ::testing::PrintToString(w.lines);
  EXPECT_THROW(c.token(2, 0), Error) << "0 tokens is the caller's mistake, never failed open";
}

TEST(HintClient, TokenReportsOfAProtectedRequestReachTheDaemon) {
  SocketDir dir;
  Warnings w;
  FakeDaemon d({}, dir.socket());
  HintClient c(options(dir.socket(), w));
  ASSERT_TRUE(c.begin(5));
  c.token(5);
  c.token(5, 17);
  c.end(5, 40);
  ASSERT_TRUE(c.begin(6));
  c.end(6);  // an old-style end: no tokens on the wire
  const auto got = d.received();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[1].op, Op::kToken);
  EXPECT_EQ(got[1].request, 5u);
  EXPECT_EQ(got[1].tokens, 1u);
  EXPECT_EQ(got[2].tokens, 17u);
  EXPECT_EQ(got[3].op, Op::kEnd);
  EXPECT_EQ(got[3].tokens, 40u);
  EXPECT_EQ(got[5].op, Op::kEnd);
  EXPECT_EQ(got[5].tokens, 0u);
  EXPECT_TRUE(w.lines.empty()) << ::testing::PrintToString(w.lines);
}

TEST(HintClient, ADaemonRestartedUnderTheClientLosesNoRequestAndProtectsAgain) {
  SocketDir dir;
  Warnings w;
  auto o = options(dir.socket(), w);
  o.retry_min = 1ms;
  o.retry_max = 1ms;
  auto first = std::make_unique<FakeDaemon>(FakeDaemon::Handler{}, dir.socket());
  HintClient c(std::move(o));
  uint64_t id = 0;
  EXPECT_TRUE(c.begin(++id));
  c.end(id);
  EXPECT_TRUE(c.begin(++id));  // open while the daemon goes away
  EXPECT_EQ(hints(*first), (std::vector<std::pair<Op, uint64_t>>{
                               {Op::kBegin, 1}, {Op::kEnd, 1}, {Op::kBegin, 2}}));
  first.reset();
  const uint64_t open_across = id;
  // Away: requests run; none throws.
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(c.begin(++id));
    c.end(id);
  }
  EXPECT_EQ(c.stats().requests_unprotected, 3u);
  FakeDaemon second({}, dir.socket());
  // Back: a later request reconnects and is protected (the backoff is 1 ms here).
  bool back = false;
  for (int i = 0; i < 2000 && !back; ++i) {
    back = c.begin(++id);
    c.end(id);
    if (!back) ::usleep(1000);
  }
  ASSERT_TRUE(back);
  c.end(open_across);  // begun on the first daemon: the second never saw it, so nothing is sent
  const auto got = hints(second);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(Op::kBegin, id));
  EXPECT_EQ(got[1], std::make_pair(Op::kEnd, id));
  const auto s = c.stats();
  EXPECT_EQ(s.requests_protected, 3u);
  EXPECT_EQ(s.reconnects, 1u);
  EXPECT_EQ(s.requests_open, 0u);
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(w.count("cannot be reached"), 1u) << ::testing::PrintToString(w.lines);
  EXPECT_EQ(w.count("protected again"), 1u) << ::testing::PrintToString(w.lines);
  EXPECT_EQ(w.lines.size(), 2u) << ::testing::PrintToString(w.lines);
}

TEST(HintClient, AConnectionTheDaemonClosedIsReplacedWithoutLosingARequest) {
  // A daemon that closes each connection after its first answer (as an idle timeout or a quick
  // restart does between two requests).
  FakeDaemon d([](const Message& m) { return Action{encode(ok_reply(m.seq)), true}; });
  Warnings w;
  auto o = options(d.path(), w);
  o.retry_min = std::chrono::hours(1);  // no reconnect but the immediate one
  o.retry_max = std::chrono::hours(1);
  HintClient c(std::move(o));
  for (uint64_t id = 1; id <= 3; ++id) EXPECT_TRUE(c.begin(id)) << id;
  EXPECT_EQ(hints(d), (std::vector<std::pair<Op, uint64_t>>{
                          {Op::kBegin, 1}, {Op::kBegin, 2}, {Op::kBegin, 3}}));
  EXPECT_EQ(c.stats().requests_unprotected, 0u);
  EXPECT_EQ(c.stats().reconnects, 2u);
  EXPECT_TRUE(w.lines.empty()) << ::testing::PrintToString(w.lines);
}

TEST(HintClient, WhileBackingOffAHintDoesNotTryToConnect) {
  SocketDir dir;
  Warnings w;
  auto o = options(dir.socket(), w);
  o.retry_min = std::chrono::hours(1);
  o.retry_max = std::chrono::hours(1);
  HintClient c(std::move(o));  // the first attempt fails: the next is an hour away
  FakeDaemon d({}, dir.socket());
  EXPECT_FALSE(c.begin(1));
  c.end(1);
  EXPECT_TRUE(d.received().empty());
  // A caller that requires the daemon for this request connects now.
  EXPECT_TRUE(c.begin(2, true));
  EXPECT_EQ(hints(d), (std::vector<std::pair<Op, uint64_t>>{{Op::kBegin, 2}}));
}

TEST(HintClient, ARefusalIsReportedOnceAndTheRequestRunsUnprotected) {
  FakeDaemon d([](const Message& m) {
    return FakeDaemon::refuse(m.seq, ErrorCode::kNotPermitted, "pid 7 is in class offline");
  });
  Warnings w;
  HintClient c(options(d.path(), w));
  EXPECT_FALSE(c.begin(1));
  EXPECT_FALSE(c.begin(2));
  c.end(1);
  c.end(2);
  const auto s = c.stats();
  EXPECT_EQ(s.requests_unprotected, 2u);
  EXPECT_TRUE(s.connected) << "a refusal is an answer: the connection stays";
  ASSERT_EQ(w.lines.size(), 1u) << ::testing::PrintToString(w.lines);
  EXPECT_NE(w.lines[0].find("pid 7 is in class offline"), std::string::npos) << w.lines[0];
  // Unprotected requests are not ended on the daemon.
  EXPECT_EQ(hints(d), (std::vector<std::pair<Op, uint64_t>>{{Op::kBegin, 1}, {Op::kBegin, 2}}));
}

TEST(HintClient, ARefusedDeferredBeginIsCountedUnprotected) {
  FakeDaemon d([](const Message& m) {
    if (m.op == Op::kBegin && m.request == 1)
      return FakeDaemon::refuse(m.seq, ErrorCode::kNotPermitted, "not now");
    return FakeDaemon::ok(m.seq);
  });
  Warnings w;
  auto o = options(d.path(), w);
  o.hint_replies = Connection::HintReplies::kDeferred;
  HintClient c(std::move(o));
  EXPECT_TRUE(c.begin(1));  // sent; the refusal comes later
  c.call([](Connection& conn) { conn.flush(); });
  EXPECT_TRUE(c.begin(2)) << "the refusal of request 1 does not fail request 2";
  const auto s = c.stats();
  EXPECT_EQ(s.requests_unprotected, 1u);
  EXPECT_EQ(s.requests_protected, 1u);
  EXPECT_EQ(w.count("not now"), 1u) << ::testing::PrintToString(w.lines);
}

TEST(HintClient, RequireDaemonFailsClosed) {
  SocketDir dir;
  Warnings w;
  auto o = options(dir.socket(), w);
  o.require_daemon = true;
  try {
    HintClient c(std::move(o));
    FAIL() << "constructed without a daemon";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_NE(std::string(e.what()).find(dir.socket()), std::string::npos) << e.what();
  }
  FakeDaemon d([](const Message& m) {
    return FakeDaemon::refuse(m.seq, ErrorCode::kNotPermitted, "class offline");
  });
  auto strict = options(d.path(), w);
  strict.require_daemon = true;
  HintClient c(std::move(strict));
  try {
    c.begin(1);
    FAIL() << "a refused begin did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EPERM);
  }
  EXPECT_EQ(c.stats().requests_open, 0u);
  EXPECT_TRUE(w.lines.empty());

  // A fail-open client, one request that must be protected.
  HintClient lax(options(dir.socket(), w));
  EXPECT_THROW(lax.begin(1, true), Error);
  EXPECT_FALSE(lax.begin(2));
}

TEST(HintClient, UsageErrorsAreNeverFailedOpen) {
  SocketDir dir;
  Warnings w;
  HintClient c(options(dir.socket(), w));
  EXPECT_THROW(c.begin(0), Error);
  EXPECT_FALSE(c.begin(3));
  EXPECT_THROW(c.begin(3), Error) << "request 3 is open";
  EXPECT_THROW(c.expect(0), Error);
  auto bad = options(dir.socket(), w);
  bad.retry_min = 0ms;
  EXPECT_THROW(HintClient{std::move(bad)}, Error);
  ::setenv(kHintRepliesEnv, "sometimes", 1);
  EXPECT_THROW(HintClient{options(dir.socket(), w)}, Error);
  ::unsetenv(kHintRepliesEnv);
}

}  // namespace
}  // namespace gpreempt::client
