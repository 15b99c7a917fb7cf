// client::Connection against a fake gpreemptd: what it sends, how each daemon refusal becomes an
// errno with the daemon's sentence, and that a silent, dying or garbling daemon fails the call
// with a clear error instead of hanging or half-reading.
#include "client/connection.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <atomic>
#include <future>
#include <thread>
#include <string>

#include "common/error.h"
#include "fake_daemon.h"

namespace gpreempt::client {
namespace {

using testing::Action;
using testing::FakeDaemon;
using namespace std::chrono_literals;

// Runs `fn` and returns the Error it throws (a failure when it throws nothing).
template <class F>
Error error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error(0, "");
}

TEST(ClientConnection, HintsCarryTheirRequestIdsAndEachCallItsOwnSeq) {
  FakeDaemon daemon;
  auto c = Connection::connect(daemon.path());
  c.begin(7);
  c.expect(1500);
  c.end(7);
  const auto got = daemon.received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].op, Op::kBegin);
  EXPECT_EQ(got[0].request, 7u);
  EXPECT_EQ(got[1].op, Op::kExpect);
  EXPECT_EQ(got[1].in_us, 1500);
  EXPECT_EQ(got[2].op, Op::kEnd);
  EXPECT_EQ(got[2].request, 7u);
  EXPECT_NE(got[0].seq, got[1].seq);
  EXPECT_NE(got[1].seq, got[2].seq);
  EXPECT_NE(got[0].seq, got[2].seq);
}

TEST(ClientConnection, InvalidArgumentsAreRefusedBeforeAnythingIsSent) {
  FakeDaemon daemon;
  auto c = Connection::connect(daemon.path());
  EXPECT_EQ(error_of([&] { c.begin(0); }).code(), EINVAL);
  EXPECT_EQ(error_of([&] { c.expect(0); }).code(), EINVAL);
  EXPECT_EQ(error_of([&] { c.suspend(Target{}, 500); }).code(), EINVAL);
  EXPECT_EQ(error_of([&] { c.suspend(Target{"offline", 12, {}}, 500); }).code(), EINVAL);
  EXPECT_EQ(error_of([&] { c.suspend(Target{"offline", {}, {}}, 0); }).code(), EINVAL);
  EXPECT_TRUE(daemon.received().empty());
  EXPECT_TRUE(c.connected());
}

TEST(ClientConnection, OperatorCommandsSendTheirTargetAndReturnTheResult) {
  FakeDaemon daemon([](const Message& m) {
    return FakeDaemon::ok(m.seq, {{"suspended_pids", {11, 12}}});
  });
  auto c = Connection::connect(daemon.path());
  auto r = c.suspend(Target{"offline", {}, 0xf7bcu}, 250);
  EXPECT_EQ(r["suspended_pids"], (nlohmann::ordered_json{11, 12}));
  c.resume(Target{{}, 4321, {}});
  c.reload();
  const auto got = daemon.received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].op, Op::kSuspend);
  EXPECT_EQ(got[0].target.class_name, "offline");
  EXPECT_EQ(got[0].target.gpu_id, 0xf7bcu);
  EXPECT_EQ(got[0].for_ms, 250);
  EXPECT_EQ(got[1].op, Op::kResume);
  EXPECT_EQ(got[1].target.pid, 4321);
  EXPECT_EQ(got[2].op, Op::kReload);
}

TEST(ClientConnection, HelloAndStatusReturnWhatTheDaemonSaid) {
  FakeDaemon daemon([](const Message& m) {
    if (m.op == Op::kHello) {
      return FakeDaemon::ok(m.seq, {{"daemon_version", "0.3.0"},
                                    {"protocol", 1},
                                    {"pid", 77},
                                    {"class", "online"},
                                    {"may_preempt", true}});
    }
    return FakeDaemon::ok(m.seq, {{"schema_version", 1}, {"gpus", nlohmann::ordered_json::array()}});
  });
  auto c = Connection::connect(daemon.path());
  const HelloInfo h = c.hello();
  EXPECT_EQ(h.daemon_version, "0.3.0");
  EXPECT_EQ(h.pid, 77);
  EXPECT_EQ(h.class_name, "online");
  EXPECT_EQ(h.protocol, 1);
  EXPECT_TRUE(h.may_preempt);
  EXPECT_EQ(h.reason, "");
  EXPECT_EQ(c.status()["schema_version"], 1);
}

TEST(ClientConnection, HelloWithoutAClassSaysSo) {
  FakeDaemon daemon([](const Message& m) {
    return FakeDaemon::ok(m.seq, {{"daemon_version", "0.3.0"}, {"pid", 77}, {"class", nullptr},
                                  {"may_preempt", false}, {"reason", "no class matches pid 77"}});
  });
  auto c = Connection::connect(daemon.path());
  const HelloInfo h = c.hello();
  EXPECT_FALSE(h.class_name.has_value());
  EXPECT_FALSE(h.may_preempt);
  EXPECT_EQ(h.reason, "no class matches pid 77");
}

struct Mapping {
  ErrorCode code;
  int expected_errno;
};

class ClientRefusal : public ::testing::TestWithParam<Mapping> {};

TEST_P(ClientRefusal, BecomesItsErrnoWithTheDaemonsMessage) {
  const Mapping m = GetParam();
  const std::string why = std::string("because ") + to_string(m.code);
  FakeDaemon daemon([&](const Message& msg) { return FakeDaemon::refuse(msg.seq, m.code, why); });
  auto c = Connection::connect(daemon.path());
  const Error e = error_of([&] { c.begin(1); });
  EXPECT_EQ(e.code(), m.expected_errno) << to_string(m.code);
  EXPECT_EQ(std::string(e.what()), why);
  // A refusal is an answer, not a broken connection: the next call goes through.
  EXPECT_TRUE(c.connected());
  EXPECT_EQ(error_of([&] { c.end(1); }).code(), m.expected_errno);
}

INSTANTIATE_TEST_SUITE_P(EveryCode, ClientRefusal,
                         ::testing::Values(Mapping{ErrorCode::kNotPermitted, EPERM},
                                           Mapping{ErrorCode::kUnknownTarget, ESRCH},
                                           Mapping{ErrorCode::kUnavailable, EAGAIN},
                                           Mapping{ErrorCode::kBadRequest, EINVAL},
                                           Mapping{ErrorCode::kUnsupportedVersion, EPROTO},
                                           Mapping{ErrorCode::kInternal, EIO}),
                         [](const auto& info) { return std::string(to_string(info.param.code)); });

TEST(ClientConnection, ConnectFailureNamesTheSocketAndTheDaemon) {
  const std::string path = "/tmp/gpreempt-no-such-dir-for-test/gpreemptd.sock";
  const Error e = error_of([&] { Connection::connect(path); });
  EXPECT_EQ(e.code(), ENOENT);
  EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("gpreemptd running"), std::string::npos) << e.what();
}

TEST(ClientConnection, EmptyPathMeansGpreemptSocket) {
  FakeDaemon daemon;
  ::setenv(kSocketEnv, daemon.path().c_str(), 1);
  auto c = Connection::connect("");
  ::unsetenv(kSocketEnv);
  EXPECT_EQ(c.path(), daemon.path());
  c.begin(3);
  EXPECT_EQ(daemon.received().size(), 1u);
}

TEST(ClientConnection, ASilentDaemonTimesOutAndTheConnectionIsThenClosed) {
  FakeDaemon daemon([](const Message&) { return Action{}; });
  auto c = Connection::connect(daemon.path());
  c.set_timeout(30ms);
  const Error e = error_of([&] { c.begin(1); });
  EXPECT_EQ(e.code(), ETIMEDOUT);
  EXPECT_NE(std::string(e.what()).find("30 ms"), std::string::npos) << e.what();
  // A late reply would be taken for the next call's: the connection is not reused.
  EXPECT_FALSE(c.connected());
  EXPECT_EQ(error_of([&] { c.end(1); }).code(), ENOTCONN);
}

TEST(ClientConnection, ADaemonThatHangsUpMidReplyIsReported) {
  FakeDaemon daemon([](const Message&) { return Action{R"({"v":1,"seq":1,"ok":)", true}; });
  auto c = Connection::connect(daemon.path());
  const Error e = error_of([&] { c.begin(1); });
  EXPECT_EQ(e.code(), ECONNRESET);
  EXPECT_NE(std::string(e.what()).find("mid-reply"), std::string::npos) << e.what();
}

TEST(ClientConnection, ADaemonThatHangsUpWithoutReplyingIsReported) {
  FakeDaemon daemon([](const Message&) { return Action{"", true}; });
  auto c = Connection::connect(daemon.path());
  EXPECT_EQ(error_of([&] { c.begin(1); }).code(), ECONNRESET);
}

TEST(ClientConnection, AReplyLongerThanTheLineLimitIsAProtocolError) {
  FakeDaemon daemon([](const Message&) { return Action{std::string(kMaxLineBytes + 16, 'x'), false}; });
  auto c = Connection::connect(daemon.path());
  const Error e = error_of([&] { c.status(); });
  EXPECT_EQ(e.code(), EPROTO);
  EXPECT_NE(std::string(e.what()).find("longer than"), std::string::npos) << e.what();
  EXPECT_FALSE(c.connected());
}

TEST(ClientConnection, AReplyToAnotherMessageIsAProtocolError) {
  FakeDaemon daemon([](const Message& m) { return FakeDaemon::ok(m.seq + 100); });
  auto c = Connection::connect(daemon.path());
  EXPECT_EQ(error_of([&] { c.begin(1); }).code(), EPROTO);
}

TEST(ClientConnection, AReplyThatIsNotJsonIsAProtocolError) {
  FakeDaemon daemon([](const Message&) { return Action{"hello there\n", false}; });
  auto c = Connection::connect(daemon.path());
  const Error e = error_of([&] { c.begin(1); });
  EXPECT_EQ(e.code(), EPROTO);
  EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos) << e.what();
}

TEST(ClientConnection, ClosingTheConnectionIsSeenByTheDaemon) {
  FakeDaemon daemon;
  {
    auto c = Connection::connect(daemon.path());
    c.begin(1);
  }
  // The server thread notices the hang-up asynchronously: the next connection's round trip is
  // served after it (one poll loop, fds in order), so by then it has been counted.
  auto c2 = Connection::connect(daemon.path());
  c2.hello();
  EXPECT_EQ(daemon.hangups(), 1);
}

TEST(ClientConnection, DeferredHintsReturnBeforeTheDaemonAnswers) {
  std::promise<void> answer;
  std::shared_future<void> go = answer.get_future().share();
  FakeDaemon daemon([go](const Message& m) {
    go.wait();  // the daemon answers nothing until the test lets it
    return FakeDaemon::ok(m.seq);
  });
  // Lets the daemon's thread go however the test ends (before the daemon is destroyed).
  struct Release {
    std::promise<void>& p;
    bool done = false;
    void now() {
      if (!done) p.set_value();
      done = true;
    }
    ~Release() { now(); }
  } release{answer};
  auto c = Connection::connect(daemon.path());
  c.set_timeout(1s);
  c.set_hint_replies(Connection::HintReplies::kDeferred);
  c.begin(1);  // waiting for the answer would time out (ETIMEDOUT)
  c.expect(500);
  release.now();
  c.flush();
  const auto got = daemon.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].op, Op::kBegin);
  EXPECT_EQ(got[1].op, Op::kExpect);
}

TEST(ClientConnection, ARefusedDeferredHintIsThrownByALaterCallNamingIt) {
  FakeDaemon daemon([](const Message& m) {
    if (m.op == Op::kBegin) return FakeDaemon::refuse(m.seq, ErrorCode::kNotPermitted, "offline");
    return FakeDaemon::ok(m.seq, {{"seq_seen", m.seq}});
  });
  auto c = Connection::connect(daemon.path());
  c.set_hint_replies(Connection::HintReplies::kDeferred);
  c.begin(5);
  const Error e = error_of([&] { c.flush(); });
  EXPECT_EQ(e.code(), EPERM);
  EXPECT_NE(std::string(e.what()).find("begin of request 5"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("offline"), std::string::npos) << e.what();
  // Thrown once; the connection stays usable and replies stay matched to their messages.
  EXPECT_TRUE(c.connected());
  c.expect(100);
  c.end(5);
  EXPECT_EQ(c.status()["seq_seen"], 4);
}

TEST(ClientConnection, ACallAfterDeferredHintsGetsItsOwnReply) {
  FakeDaemon daemon([](const Message& m) { return FakeDaemon::ok(m.seq, {{"seq_seen", m.seq}}); });
  auto c = Connection::connect(daemon.path());
  c.set_hint_replies(Connection::HintReplies::kDeferred);
  for (uint64_t i = 1; i <= 50; ++i) {
    c.begin(i);
    c.end(i);
  }
  EXPECT_EQ(c.status()["seq_seen"], 101);
  EXPECT_EQ(daemon.received().size(), 101u);
}

TEST(ClientConnection, ClosingWaitsUntilTheDaemonAnsweredItsDeferredHints) {
  std::atomic<int> answered{0};
  std::promise<void> answer;
  std::shared_future<void> go = answer.get_future().share();
  FakeDaemon daemon([&answered, go](const Message& m) {
    go.wait();
    ++answered;
    return FakeDaemon::ok(m.seq);
  });
  // The daemon is let go a little after the close began: a close that did not wait would
  // return before it answered anything.
  std::thread releaser([&answer] {
    std::this_thread::sleep_for(50ms);
    answer.set_value();
  });
  {
    auto c = Connection::connect(daemon.path());
    c.set_hint_replies(Connection::HintReplies::kDeferred);
    c.begin(1);
    c.end(1);
    c.close();
    EXPECT_EQ(answered.load(), 2);
  }
  releaser.join();
}

TEST(ClientConnection, TheHintReplyModeComesFromTheEnvironment) {
  FakeDaemon daemon;
  ::setenv(kHintRepliesEnv, "deferred", 1);
  auto deferred = Connection::connect(daemon.path());
  ::setenv(kHintRepliesEnv, "wait", 1);
  auto waiting = Connection::connect(daemon.path());
  ::setenv(kHintRepliesEnv, "later", 1);
  const Error e = error_of([&] { Connection::connect(daemon.path()); });
  ::unsetenv(kHintRepliesEnv);
  auto plain = Connection::connect(daemon.path());
  EXPECT_EQ(deferred.hint_replies(), Connection::HintReplies::kDeferred);
  EXPECT_EQ(waiting.hint_replies(), Connection::HintReplies::kWait);
  EXPECT_EQ(plain.hint_replies(), Connection::HintReplies::kWait);
  EXPECT_EQ(e.code(), EINVAL);
  EXPECT_NE(std::string(e.what()).find("later"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace gpreempt::client
