// The wire form of the gpreemptd protocol: what each side sends is what the other decodes, and
// every malformed line is refused with a reason instead of being half-understood.
#include "client/protocol.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gpreempt::client {
namespace {

Message round_trip(const Message& m) {
  std::string line = encode(m);
  EXPECT_EQ(line.back(), '\n');
  line.pop_back();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  return decode_message(line);
}

ProtocolError refusal(std::string_view line) {
  try {
    decode_message(line);
  } catch (const ProtocolError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << line;
  return {};
}

TEST(ClientProtocol, EveryOpRoundTripsWithItsFields) {
  Message begin{Op::kBegin, 7, 42, 0, {}, 0, 0};
  auto b = round_trip(begin);
  EXPECT_EQ(b.op, Op::kBegin);
  EXPECT_EQ(b.seq, 7u);
  EXPECT_EQ(b.request, 42u);

  Message expect{Op::kExpect, 8, 0, 1500, {}, 0, 0};
  EXPECT_EQ(round_trip(expect).in_us, 1500);

  Message suspend{Op::kSuspend, 9, 0, 0, {"offline", std::nullopt, 0xf7bcu}, 500, 0};
  auto s = round_trip(suspend);
  EXPECT_EQ(s.op, Op::kSuspend);
  EXPECT_EQ(s.target.class_name, "offline");
  EXPECT_FALSE(s.target.pid.has_value());
  EXPECT_EQ(s.target.gpu_id, 0xf7bcu);
  EXPECT_EQ(s.for_ms, 500);

  Message resume{Op::kResume, 10, 0, 0, {std::nullopt, 1234, std::nullopt}, 0, 0};
  auto r = round_trip(resume);
  EXPECT_EQ(r.target.pid, 1234);
  EXPECT_FALSE(r.target.class_name.has_value());

  for (Op op : {Op::kHello, Op::kStatus, Op::kReload}) {
    EXPECT_EQ(round_trip(Message{op, 1, 0, 0, {}, 0, 0}).op, op);
  }
}

TEST(ClientProtocol, TokenReportsAndEndsWithTokensRoundTrip) {
  Message first{Op::kToken, 11, 42, 0, {}, 0, 1};
  EXPECT_EQ(encode(first), "{\"v\":1,\"seq\":11,\"op\":\"token\",\"request\":42}\n")
      << "the first token is the op alone";
  auto f = round_trip(first);
  EXPECT_EQ(f.op, Op::kToken);
  EXPECT_EQ(f.request, 42u);
  EXPECT_EQ(f.tokens, 1u);
  Message progress{Op::kToken, 12, 42, 0, {}, 0, 17};
  EXPECT_EQ(round_trip(progress).tokens, 17u);

  Message end{Op::kEnd, 13, 42, 0, {}, 0, 120};
  EXPECT_EQ(encode(end), "{\"v\":1,\"seq\":13,\"op\":\"end\",\"request\":42,\"tokens\":120}\n");
  EXPECT_EQ(round_trip(end).tokens, 120u);
  // An end without tokens is the old one, on the wire and decoded.
  Message plain{Op::kEnd, 14, 42, 0, {}, 0, 0};
  EXPECT_EQ(encode(plain), "{\"v\":1,\"seq\":14,\"op\":\"end\",\"request\":42}\n");
  EXPECT_EQ(round_trip(plain).tokens, 0u);
  EXPECT_EQ(decode_message(R"({"v":1,"seq":3,"op":"end","request":5})").tokens, 0u);
  EXPECT_EQ(decode_message(R"({"v":1,"seq":3,"op":"token","request":5})").tokens, 1u);
  EXPECT_STREQ(to_string(Op::kToken), "token");
  EXPECT_FALSE(needs_control_permission(Op::kToken)) << "a hint";
}

TEST(ClientProtocol, BadTokenFieldsAreRefusedWithTheReason) {
  EXPECT_EQ(refusal(R"({"v":1,"seq":4,"op":"token"})").message,
            "\"token\" needs \"request\", a positive integer");
  EXPECT_EQ(refusal(R"({"v":1,"seq":4,"op":"token","request":0})").message,
            "\"token\" needs \"request\", a positive integer");
  EXPECT_EQ(refusal(R"({"v":1,"seq":4,"op":"token","request":3,"tokens":0})").message,
            "\"tokens\" of \"token\" must be positive");
  EXPECT_EQ(refusal(R"({"v":1,"seq":4,"op":"end","request":3,"tokens":0})").message,
            "\"tokens\" of \"end\" must be positive");
  EXPECT_EQ(refusal(R"({"v":1,"seq":4,"op":"token","request":3,"tokens":-2})").message,
            "\"tokens\" must be a non-negative integer");
  EXPECT_EQ(refusal(R"({"v":1,"seq":4,"op":"end","request":3,"tokens":"many"})").message,
            "\"tokens\" must be a non-negative integer");
  const auto e = refusal(R"({"v":1,"seq":4,"op":"token","request":3,"tokens":1.5})");
  EXPECT_EQ(e.code, ErrorCode::kBadRequest);
  EXPECT_EQ(e.seq, 4u);
}

TEST(ClientProtocol, OnlyStateChangingOpsNeedControlPermission) {
  EXPECT_TRUE(needs_control_permission(Op::kSuspend));
  EXPECT_TRUE(needs_control_permission(Op::kResume));
  EXPECT_TRUE(needs_control_permission(Op::kReload));
  for (Op op : {Op::kHello, Op::kBegin, Op::kEnd, Op::kExpect, Op::kStatus}) {
    EXPECT_FALSE(needs_control_permission(op)) << to_string(op);
  }
}

TEST(ClientProtocol, MalformedMessagesAreRefusedWithTheReason) {
  EXPECT_NE(refusal("not json").message.find("not JSON"), std::string::npos);
  EXPECT_NE(refusal("[1,2]").message.find("not an object"), std::string::npos);
  EXPECT_NE(refusal(R"({"seq":1,"op":"hello"})").message.find("\"v\""), std::string::npos);

  auto version = refusal(R"({"v":2,"seq":5,"op":"hello"})");
  EXPECT_EQ(version.code, ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(version.seq, 5u);

  auto unknown = refusal(R"({"v":1,"seq":3,"op":"explode"})");
  EXPECT_EQ(unknown.code, ErrorCode::kBadRequest);
  EXPECT_EQ(unknown.seq, 3u);
  EXPECT_NE(unknown.message.find("explode"), std::string::npos);

  EXPECT_NE(refusal(R"({"v":1,"seq":1,"op":"begin"})").message.find("request"),
            std::string::npos);
  refusal(R"({"v":1,"seq":1,"op":"begin","request":0})");
  refusal(R"({"v":1,"seq":1,"op":"begin","request":-4})");
  refusal(R"({"v":1,"seq":1,"op":"begin","request":"4"})");
  refusal(R"({"v":1,"seq":1,"op":"expect"})");
  refusal(R"({"v":1,"seq":1,"op":"suspend","for_ms":5})");                       // no target
  refusal(R"({"v":1,"seq":1,"op":"suspend","class":"a","pid":3,"for_ms":5})");  // two targets
  refusal(R"({"v":1,"seq":1,"op":"suspend","class":"a"})");                      // no for_ms
  refusal(R"({"v":1,"seq":1,"op":"resume","class":""})");
  refusal(R"({"v":1,"seq":1,"op":"resume","pid":0})");
  refusal(R"({"v":1,"seq":1,"op":"resume","pid":3,"gpu_id":4294967296})");
}

TEST(ClientProtocol, RepliesCarryResultOrErrorWithMessage) {
  auto ok = ok_reply(4, {{"class", "online"}, {"may_preempt", true}});
  std::string line = encode(ok);
  line.pop_back();
  Reply back = decode_reply(line);
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.seq, 4u);
  EXPECT_EQ(back.body["class"], "online");

  line = encode(error_reply(6, ErrorCode::kNotPermitted, "pid 12 is in class offline"));
  line.pop_back();
  back = decode_reply(line);
  EXPECT_FALSE(back.ok);
  EXPECT_EQ(back.error, ErrorCode::kNotPermitted);
  EXPECT_EQ(back.message, "pid 12 is in class offline");

  // An error code from a newer daemon is kept as internal, with its message.
  back = decode_reply(R"({"v":1,"seq":2,"ok":false,"error":"quota","message":"over quota"})");
  EXPECT_EQ(back.error, ErrorCode::kInternal);
  EXPECT_EQ(back.message, "over quota");
}

TEST(ClientProtocol, LineReaderReassemblesSplitLinesAndBoundsThem) {
  LineReader reader;
  EXPECT_TRUE(reader.feed("{\"a\":").empty());
  auto lines = reader.feed("1}\n{\"b\":2}\n{\"c\"");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "{\"a\":1}");
  EXPECT_EQ(lines[1], "{\"b\":2}");
  EXPECT_EQ(reader.pending(), 4u);

  LineReader bounded;
  std::string almost(kMaxLineBytes - 1, 'x');
  EXPECT_EQ(bounded.feed(almost + "\n").size(), 1u);  // exactly the limit with its newline
  EXPECT_THROW(bounded.feed(std::string(kMaxLineBytes, 'y')), ProtocolError);
}

TEST(ClientProtocol, SocketPathComesFromTheEnvironmentWhenSet) {
  ::setenv(kSocketEnv, "/tmp/x.sock", 1);
  EXPECT_EQ(default_socket_path(), "/tmp/x.sock");
  ::setenv(kSocketEnv, "", 1);
  EXPECT_EQ(default_socket_path(), kDefaultSocketPath);
  ::unsetenv(kSocketEnv);
  EXPECT_EQ(default_socket_path(), kDefaultSocketPath);
}

}  // namespace
}  // namespace gpreempt::client
