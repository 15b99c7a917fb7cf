// The engine's event queue must hand events out in exactly one priority queue's (time, seq)
// order, whatever mix of same-instant and later events the engine schedules: every simulated
// result depends on that order.
#include <gtest/gtest.h>

#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "sim/gpu/engine_impl.h"

namespace gpreempt::sim::gpu {
namespace {

using engine_detail::Event;
using engine_detail::EvKind;

TEST(EventQueue, GivesOnePriorityQueuesOrderUnderTheEnginesSchedulingPattern) {
  std::mt19937_64 rng(7);
  EventQueue<Event, SimTime> q;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ref;
  uint64_t seq = 0;
  SimTime now = 0;
  const auto push = [&](SimTime t) {
    const Event e{t, seq++, EvKind::kCohortEnd, seq, 0};
    q.push(e, now);
    ref.push(e);
  };
  for (int i = 0; i < 50; ++i) push(static_cast<SimTime>(rng() % 100));
  std::size_t taken = 0, same_instant = 0;
  while (!ref.empty()) {
    ASSERT_FALSE(q.empty());
    const Event want = ref.top();
    ref.pop();
    const Event got = q.top();
    q.pop();
    ASSERT_EQ(got.t, want.t) << "event " << taken;
    ASSERT_EQ(got.seq, want.seq) << "event " << taken;
    ++taken;
    now = got.t;
    // As a handler does: events due at this very instant (a dispatch after a cohort end), and
    // later ones (cohort ends, packet starts), some at times other events already hold.
    if (taken < 20000) {
      for (uint64_t k = rng() % 3; k > 0; --k, ++same_instant) push(now);
      for (uint64_t k = rng() % 3; k > 0; --k) push(now + static_cast<SimTime>(rng() % 50));
    }
  }
  EXPECT_TRUE(q.empty());
  EXPECT_GT(same_instant, 5000u);  // the FIFO path was exercised, not only the heap
}

TEST(EventQueue, AnEventDueNowAfterALaterInstantsEventsStillComesFirst) {
  // An event scheduled for the current instant while the FIFO holds none goes there; a heap
  // event of the same instant with a smaller seq must still come out before it.
  EventQueue<Event, SimTime> q;
  q.push(Event{10, 1, EvKind::kCohortEnd, 0, 0}, 0);   // due at 10, scheduled at 0: the heap
  q.push(Event{10, 2, EvKind::kDispatch, 0, 0}, 10);   // due now, at 10: the FIFO
  q.push(Event{5, 3, EvKind::kCohortEnd, 0, 0}, 10);   // in the past of now (never in the engine)
  std::vector<uint64_t> order;
  while (!q.empty()) {
    order.push_back(q.top().seq);
    q.pop();
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{3, 1, 2}));
}

}  // namespace
}  // namespace gpreempt::sim::gpu
