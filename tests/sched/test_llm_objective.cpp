// LLM objectives (TTFT, TPOT; objective.h) on a fake clock: a request's measures from its token
// reports (request_tokens.h), the controller judging each goal (a miss on either escalates, both
// must hold to relax), and the scheduler's `late` protection keyed on tokens — a request without
// its first token after half the TTFT target, or decoding slower than half the TPOT target.
#include <gtest/gtest.h>

#include "sched/request_tokens.h"
#include "sched/slo_controller.h"
#include "sched_driver.h"

namespace gpreempt::sched::testing {
namespace {

Objective llm(std::optional<Duration> ttft, std::optional<Duration> tpot, double p = 99,
              Duration window = 10s) {
  Objective o;
  o.window = window;
  if (ttft) o.ttft = Goal{Metric::kTtft, p, *ttft};
  if (tpot) o.tpot = Goal{Metric::kTpot, p, *tpot};
  return o;
}

SchedClass online_with(const Objective& o) {
  SchedClass c{"online", 10, {RequestSource::kHint}, std::nullopt};
  c.objective = o;
  return c;
}

// `n` measures of `metric` for class online, one every `gap`; returns the time after.
Time feed(SloController& s, Time t, int n, Duration gap, Metric metric, Duration value,
          int* changes = nullptr) {
  for (int i = 0; i < n; ++i) {
    t += gap;
    if (s.record("online", t, metric, value) && changes) ++*changes;
  }
  return t;
}

TEST(RequestTokens, TtftIsBeginToFirstTokenAndTpotTheDecodeOverTokensAfterTheFirst) {
  RequestTokens r{Time{0} + 1s, {}, 0, {}};
  EXPECT_FALSE(r.ttft());
  EXPECT_TRUE(r.report(Time{0} + 1s + 300ms, 1)) << "the first report is the first token";
  EXPECT_FALSE(r.report(Time{0} + 1s + 400ms, 5)) << "later ones are progress";
  EXPECT_FALSE(r.report(Time{0} + 1s + 500ms, 3)) << "a count going back is ignored";
  EXPECT_EQ(r.tokens, 5u);
  EXPECT_EQ(r.ttft(), 300ms);
  // 101 tokens, the last 2 s after the first: 20 ms per output token after the first.
  EXPECT_FALSE(r.report(Time{0} + 3s + 300ms, 101, /*at_end=*/true));
  EXPECT_EQ(r.tpot(Time{0} + 3s + 300ms), 20ms);
  EXPECT_EQ(r.first_token, Time{0} + 1s + 300ms) << "the end's count is never a first token";
}

TEST(RequestTokens, OneTokenHasNoTpotAndAnEndCountIsNoFirstToken) {
  RequestTokens one{Time{0}, {}, 0, {}};
  one.report(Time{0} + 100ms, 1);
  EXPECT_FALSE(one.tpot(Time{0} + 100ms));
  RequestTokens unreported{Time{0}, {}, 0, {}};
  unreported.report(Time{0} + 2s, 50, /*at_end=*/true);
  EXPECT_FALSE(unreported.ttft());
  EXPECT_FALSE(unreported.tpot(Time{0} + 2s)) << "no first token: no TPOT";
}

TEST(RequestTokens, LateKeysOnTheFirstTokenForTtftAndOnTheDecodePaceForTpot) {
  const Objective o = llm(400ms, 30ms);
  RequestTokens r{Time{0}, {}, 0, {}};
  EXPECT_EQ(r.late_at(o), Time{0} + 200ms) << "no first token after half the TTFT target";
  r.report(Time{0} + 150ms, 1);
  EXPECT_FALSE(r.late_at(o)) << "its first token came: no longer late for TTFT, no pace yet";
  r.report(Time{0} + 150ms + 16 * 10ms, 17);  // 10 ms per token: within half of 30
  EXPECT_FALSE(r.late_at(o));
  const Time slow = Time{0} + 150ms + 32 * 16ms;  // 33 tokens at 16 ms per token: over 15 ms
  r.report(slow, 33);
  EXPECT_EQ(r.late_at(o), slow);
  // A request-latency goal beside them: half its target, per request.
  Objective both = o;
  both.target = 10s;
  RequestTokens fresh{Time{0}, {}, 0, {}};
  fresh.report(Time{0} + 100ms, 1);
  EXPECT_EQ(fresh.late_at(both), Time{0} + 5s);
}

TEST(SloControllerLlm, ATtftMissEscalates) {
  SloController s;
  s.configure({online_with(llm(500ms, 30ms))}, Time{0});
  ASSERT_EQ(s.action("online"), Protection::kPerRequest);
  // TPOTs well within their target do not save a TTFT objective that is missed: two of 100 over.
  Time t = feed(s, Time{0}, 50, 10ms, Metric::kTpot, 5ms);
  t = feed(s, t, 1, 10ms, Metric::kTtft, 900ms);
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  feed(s, t, 1, 10ms, Metric::kTtft, 900ms);
  EXPECT_EQ(s.action("online"), Protection::kHold);
  const std::string& why = s.states().at("online").why;
  EXPECT_NE(why.find("2 TTFTs over the target"), std::string::npos) << why;
  EXPECT_NE(why.find("TTFT p99 <= 500 ms, TPOT p99 <= 30 ms over 10 s"), std::string::npos) << why;
}

TEST(SloControllerLlm, ATpotMissEscalates) {
  SloController s;
  s.configure({online_with(llm(500ms, 30ms, 95))}, Time{0});
  Time t = feed(s, Time{0}, 30, 10ms, Metric::kTtft, 50ms);
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  // One TPOT over 30 ms is all 20 may have at p95; the second breaks the objective.
  t = feed(s, t, 1, 10ms, Metric::kTpot, 45ms);
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  feed(s, t, 1, 10ms, Metric::kTpot, 45ms);
  EXPECT_EQ(s.action("online"), Protection::kHold);
  EXPECT_NE(s.states().at("online").why.find("2 TPOTs over the target (1 allowed in 20) under "
                                             "per_request"),
            std::string::npos)
      << s.states().at("online").why;
}

TEST(SloControllerLlm, RelaxesOnlyOnceBothGoalsHoldWithEnoughMeasures) {
  SloController s;
  s.configure({online_with(llm(500ms, 30ms, 95, 1s))}, Time{0});
  // A whole window of fast first tokens, but no TPOT measured: TPOT is not known to hold.
  Time t = feed(s, Time{0}, 200, 10ms, Metric::kTtft, 50ms);
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  // TPOTs within 80 % of their target too: one step less.
  int changes = 0;
  t = feed(s, t, 20, 10ms, Metric::kTpot, 20ms, &changes);
  EXPECT_EQ(s.action("online"), Protection::kLate);
  EXPECT_EQ(changes, 1);
  EXPECT_NE(s.states().at("online").why.find("trying less"), std::string::npos);
  // A TPOT slower than 80 % of the target holds the step where it is.
  for (int i = 0; i < 150; ++i) {
    t += 10ms;
    s.record("online", t, Metric::kTtft, 50ms);
    s.record("online", t, Metric::kTpot, 27ms);
  }
  EXPECT_EQ(s.action("online"), Protection::kLate);
}

TEST(SloControllerLlm, MeasuresOfAMetricTheObjectiveDoesNotStateAreIgnored) {
  SloController s;
  s.configure({online_with(llm(500ms, std::nullopt))}, Time{0});
  EXPECT_FALSE(s.record("online", Time{0} + 1s, Metric::kTpot, 10s));
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(s.record("online", Time{0} + 2s, 10s)) << "latency";
  EXPECT_EQ(s.action("online"), Protection::kPerRequest);
  EXPECT_EQ(s.count("online", Metric::kTpot, Time{0} + 2s), 0u);
  EXPECT_FALSE(s.measured("online", Goal{Metric::kTtft, 99, 500ms}, Time{0} + 2s));
}

// The scheduler measures TTFT and TPOT from the token events and serves them: online pid 10
// (objective `o`), offline pid 20, GPU 1; driven to `late` by a window of good requests.
Driver at_late(const Objective& o) {
  SchedClass offline{"offline", 0, {RequestSource::kHint}, std::nullopt};
  Driver d({}, {online_with(o), offline});
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  for (uint64_t i = 1; d.s.objectives().action("online") != Protection::kLate && i < 1000; ++i) {
    d.advance(10ms);
    d.begin(10, i);
    if (d.state(1, 20) == MemberState::kSuspending) d.complete_suspend(1);
    d.advance(1ms);
    d.tokens(10, i, 1);
    d.advance(2ms);
    d.tokens(10, i, 3, /*at_end=*/true);
    d.end(10, i);
    d.advance(2ms);
    if (d.state(1, 20) == MemberState::kResuming) d.complete_resume(1);
  }
  return d;
}

TEST(SloSchedulerLlm, TheSchedulerMeasuresTtftAndTpotFromTheTokenEvents) {
  Driver d = at_late(llm(100ms, 30ms, 95, 1s));
  ASSERT_EQ(d.s.objectives().action("online"), Protection::kLate);
  // Each request: first token 1 ms after its begin, 3 tokens, ended 2 ms later: 1 ms per token.
  EXPECT_EQ(d.s.objectives().measured("online", Goal{Metric::kTtft, 95, 100ms}, d.now), 1ms);
  EXPECT_EQ(d.s.objectives().measured("online", Goal{Metric::kTpot, 95, 30ms}, d.now), 1ms);
}

TEST(SloSchedulerLlm, LateSuspendsForARequestWithoutItsFirstTokenAfterHalfTheTtft) {
  Driver d = at_late(llm(100ms, std::nullopt, 95, 1s));
  ASSERT_EQ(d.s.objectives().action("online"), Protection::kLate);
  d.advance(10ms);
  // Its first token within 50 ms: nothing, however long its decode lasts.
  EXPECT_EQ(d.begin(10, 5000), Strings{});
  d.advance(40ms);
  EXPECT_EQ(d.tokens(10, 5000, 1), Strings{});
  EXPECT_EQ(d.advance(2s), Strings{}) << "a long decode is not late for a TTFT objective";
  d.tokens(10, 5000, 100, true);
  d.end(10, 5000);
  d.advance(10ms);
  // No first token 50 ms after its begin: a suspension.
  EXPECT_EQ(d.begin(10, 5001), Strings{});
  EXPECT_EQ(d.advance(50ms - 1ns), Strings{});
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [20@1] grace=0us request"}));
}

TEST(SloSchedulerLlm, LateSuspendsForADecodeSlowerThanHalfTheTpot) {
  Driver d = at_late(llm(std::nullopt, 30ms, 95, 1s));
  ASSERT_EQ(d.s.objectives().action("online"), Protection::kLate);
  d.advance(10ms);
  EXPECT_EQ(d.begin(10, 7000), Strings{}) << "a TPOT objective does not judge the prefill";
  d.advance(300ms);
  EXPECT_EQ(d.tokens(10, 7000, 1), Strings{});
  d.advance(160ms);
  EXPECT_EQ(d.tokens(10, 7000, 17), Strings{}) << "10 ms per token: on pace";
  d.advance(320ms);
  // 33 tokens 480 ms after the first: 15 ms per token, at half the target is not over it.
  EXPECT_EQ(d.tokens(10, 7000, 33), Strings{});
  d.advance(400ms);
  EXPECT_EQ(d.tokens(10, 7000, 49), Strings({"suspend gpu1 [20@1] grace=0us request"}))
      << "880 ms for 48 tokens: 18.3 ms per token, over 15";
}

}  // namespace
}  // namespace gpreempt::sched::testing
