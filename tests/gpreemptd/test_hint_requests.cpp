// gpreemptd's book of hinted requests (gpreemptd/hint_requests.h), on the caller's clock.
#include <gtest/gtest.h>

#include "hint_requests.h"

using gpreemptd::HintRequests;
using gpreempt::sched::ProcessKey;
using namespace std::chrono_literals;

namespace {
const HintRequests::Clock::time_point t0{};
const ProcessKey alice{100, 1}, bob{200, 2};
}  // namespace

TEST(HintRequests, BeginEndAndAnIdOpenTwice) {
  HintRequests h;
  auto a = h.begin(1, 7, alice, t0);
  ASSERT_TRUE(a);
  EXPECT_FALSE(h.begin(1, 7, alice, t0 + 1ms)) << "id 7 is open on connection 1 already";
  auto b = h.begin(2, 7, bob, t0);  // the same client id on another connection is another request
  ASSERT_TRUE(b);
  EXPECT_NE(a->id, b->id) << "the scheduler's ids are unique across connections";
  HintRequests::Open ended;
  EXPECT_EQ(h.end(1, 7, &ended), HintRequests::EndOutcome::kEnded);
  EXPECT_EQ(ended.id, a->id);
  EXPECT_EQ(ended.key, alice);
  EXPECT_EQ(h.end(1, 7, nullptr), HintRequests::EndOutcome::kUnknown) << "ended once only";
  EXPECT_EQ(h.end(1, 8, nullptr), HintRequests::EndOutcome::kUnknown);
}

TEST(HintRequests, ExpireEndsTheOldOnesAndTheirLateEndIsAnsweredAsExpired) {
  HintRequests h;
  h.begin(1, 1, alice, t0);
  h.begin(1, 2, alice, t0 + 6s);
  EXPECT_EQ(h.oldest_start(), t0);
  EXPECT_TRUE(h.expire(t0 + 9s, 10s).empty()) << "not yet";
  const auto due = h.expire(t0 + 10s, 10s);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].connection, 1u);
  EXPECT_EQ(due[0].client_id, 1u);
  EXPECT_EQ(h.expired_total(), 1u);
  EXPECT_EQ(h.oldest_start(), t0 + 6s) << "the next deadline is the remaining request's";
  EXPECT_EQ(h.end(1, 1, nullptr), HintRequests::EndOutcome::kExpired);
  EXPECT_EQ(h.end(1, 1, nullptr), HintRequests::EndOutcome::kUnknown) << "answered once";
  // An expired id begun again: its end is the new request's.
  h.expire(t0 + 16s, 10s);
  ASSERT_TRUE(h.begin(1, 2, alice, t0 + 17s));
  EXPECT_EQ(h.end(1, 2, nullptr), HintRequests::EndOutcome::kEnded);
  EXPECT_EQ(h.end(1, 2, nullptr), HintRequests::EndOutcome::kUnknown);
}

TEST(HintRequests, ExpiredIdsKeptAreBounded) {
  HintRequests h;
  const std::size_t n = HintRequests::kMaxExpiredKept + 5;
  for (std::size_t i = 0; i < n; ++i) h.begin(1, i, alice, t0);
  EXPECT_EQ(h.expire(t0 + 10s, 10s).size(), n);
  EXPECT_EQ(h.end(1, 0, nullptr), HintRequests::EndOutcome::kUnknown) << "the oldest forgotten";
  EXPECT_EQ(h.end(1, n - 1, nullptr), HintRequests::EndOutcome::kExpired);
}

TEST(HintRequests, CloseReturnsTheOpenRequestsAndForgetsTheConnection) {
  HintRequests h;
  h.begin(1, 1, alice, t0);
  h.begin(1, 2, alice, t0);
  h.begin(2, 1, bob, t0);
  EXPECT_EQ(h.close(1).size(), 2u);
  EXPECT_TRUE(h.close(1).empty());
  EXPECT_EQ(h.end(2, 1, nullptr), HintRequests::EndOutcome::kEnded) << "other connections keep theirs";
}

TEST(HintRequests, AnExitedProcessLeavesNoOpenRequest) {
  HintRequests h;
  h.begin(1, 1, alice, t0);
  h.begin(1, 2, bob, t0);
  h.forget_process(alice);
  EXPECT_EQ(h.end(1, 1, nullptr), HintRequests::EndOutcome::kUnknown);
  EXPECT_EQ(h.end(1, 2, nullptr), HintRequests::EndOutcome::kEnded);
  EXPECT_FALSE(h.oldest_start());
}

TEST(HintRequests, TokenBucketRefillsAtTheRateUpToTheBurst) {
  HintRequests h;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(h.take_token(1, t0, 10, 3)) << i;
  EXPECT_FALSE(h.take_token(1, t0, 10, 3)) << "the burst is spent";
  EXPECT_EQ(h.rate_limited(), 1u);
  EXPECT_TRUE(h.take_token(2, t0, 10, 3)) << "each connection has its own bucket";
  EXPECT_FALSE(h.take_token(1, t0 + 50ms, 10, 3)) << "half a token at 10/s";
  EXPECT_TRUE(h.take_token(1, t0 + 100ms, 10, 3));
  // A long pause refills to the burst, not beyond.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(h.take_token(1, t0 + 1h, 10, 3)) << i;
  EXPECT_FALSE(h.take_token(1, t0 + 1h, 10, 3));
  h.close(1);
  EXPECT_TRUE(h.take_token(1, t0 + 1h, 10, 3)) << "a closed connection's id starts afresh";
}

TEST(HintRequests, FindNamesAnOpenRequestForItsTokenReportsAndChangesNothing) {
  HintRequests h;
  auto a = h.begin(1, 7, alice, t0);
  ASSERT_TRUE(a);
  HintRequests::Open found;
  EXPECT_EQ(h.find(1, 7, &found), HintRequests::EndOutcome::kEnded);
  EXPECT_EQ(found.id, a->id);
  EXPECT_EQ(found.key, alice);
  EXPECT_EQ(h.find(1, 7, nullptr), HintRequests::EndOutcome::kEnded) << "still open";
  EXPECT_EQ(h.find(2, 7, nullptr), HintRequests::EndOutcome::kUnknown) << "another connection's";
  h.expire(t0 + 10s, 10s);
  EXPECT_EQ(h.find(1, 7, nullptr), HintRequests::EndOutcome::kExpired);
  EXPECT_EQ(h.end(1, 7, nullptr), HintRequests::EndOutcome::kExpired) << "its end is still answered";
}
