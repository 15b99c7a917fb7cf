// ActivityDetector on synthetic pointer samples: when requests start and finish, ids, queues that
// come and go, 64-bit pointers, a process that never idles, and the inferred kernel lengths.
#include <gtest/gtest.h>

#include "sched/activity_detector.h"

namespace gpreempt::sched {
namespace {

using namespace std::chrono_literals;

const ProcessKey kA{100, 5};
const ProcessKey kB{200, 7};

QueueActivitySample q(uint64_t queue, uint64_t rptr, uint64_t wptr, GpuId gpu = 1) {
  return {gpu, queue, rptr, wptr};
}

Time at(int64_t us) {
  return std::chrono::microseconds(us);
}

template <class T>
std::vector<T> only(const std::vector<Event>& events) {
  std::vector<T> out;
  for (const auto& e : events)
    if (const T* t = std::get_if<T>(&e)) out.push_back(*t);
  return out;
}

TEST(ActivityDetector, SubmissionStartsARequestAndDrainingEndsIt) {
  ActivityDetector d;
  EXPECT_TRUE(d.update(at(0), kA, {q(1, 0, 0)}).empty()) << "an idle queue is no request";
  auto ev = d.update(at(200), kA, {q(1, 0, 3)});
  auto started = only<event::RequestStarted>(ev);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].key, kA);
  EXPECT_EQ(started[0].source, RequestSource::kTransparent);
  EXPECT_TRUE(d.busy(kA));
  EXPECT_TRUE(only<event::RequestFinished>(d.update(at(400), kA, {q(1, 2, 3)})).empty())
      << "one packet still pending";
  auto fin = only<event::RequestFinished>(d.update(at(600), kA, {q(1, 3, 3)}));
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_EQ(fin[0].request, started[0].request);
  EXPECT_EQ(fin[0].source, RequestSource::kTransparent);
  EXPECT_FALSE(d.busy(kA));
  EXPECT_TRUE(d.update(at(800), kA, {q(1, 3, 3)}).empty());
}

TEST(ActivityDetector, EveryQueueMustDrainBeforeTheRequestEnds) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 0, 0), q(2, 0, 0)});
  EXPECT_EQ(only<event::RequestStarted>(d.update(at(1), kA, {q(1, 0, 1), q(2, 0, 0)})).size(), 1u);
  EXPECT_TRUE(d.update(at(2), kA, {q(1, 0, 1), q(2, 0, 2)}).empty())
      << "same request, second queue";
  EXPECT_TRUE(only<event::RequestFinished>(d.update(at(3), kA, {q(1, 1, 1), q(2, 0, 2)})).empty());
  EXPECT_EQ(only<event::RequestFinished>(d.update(at(4), kA, {q(1, 1, 1), q(2, 2, 2)})).size(), 1u);
}

TEST(ActivityDetector, WorkSubmittedAndDoneBetweenTwoSamplesStillCounts) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 4, 4)});
  auto ev = d.update(at(200), kA, {q(1, 6, 6)});
  ASSERT_EQ(only<event::RequestStarted>(ev).size(), 1u) << "the write pointer advanced";
  EXPECT_TRUE(only<event::RequestFinished>(ev).empty()) << "start and finish never in one sample";
  EXPECT_EQ(only<event::RequestFinished>(d.update(at(400), kA, {q(1, 6, 6)})).size(), 1u);
}

TEST(ActivityDetector, SixtyFourBitPointersNeedNoWraparound) {
  ActivityDetector d;
  const uint64_t big = (uint64_t{1} << 63) + 12345;  // beyond any 32-bit or signed range
  d.update(at(0), kA, {q(1, big, big)});
  EXPECT_EQ(only<event::RequestStarted>(d.update(at(1), kA, {q(1, big, big + 1)})).size(), 1u);
  EXPECT_EQ(only<event::RequestFinished>(d.update(at(2), kA, {q(1, big + 1, big + 1)})).size(), 1u);
  EXPECT_EQ(d.stats().queue_resets, 0u);
}

TEST(ActivityDetector, QueuesAppearAndDisappear) {
  ActivityDetector d;
  EXPECT_TRUE(d.update(at(0), kA, {}).empty()) << "no queues yet";
  EXPECT_TRUE(d.update(at(1), kA, {q(1, 0, 0)}).empty()) << "a new idle queue is no work";
  auto ev = d.update(at(2), kA, {q(1, 0, 0), q(2, 0, 1)});
  EXPECT_EQ(only<event::RequestStarted>(ev).size(), 1u) << "a new queue with pending work";
  // The busy queue is destroyed: the remaining one is idle, so the request ends.
  EXPECT_EQ(only<event::RequestFinished>(d.update(at(3), kA, {q(1, 0, 0)})).size(), 1u);
  // Gone means forgotten: the same address back with other pointers is a new, idle queue.
  EXPECT_TRUE(d.update(at(3), kA, {q(1, 0, 0), q(2, 7, 7)}).empty());
  // A queue whose pointers go backwards was replaced at the same address: followed afresh.
  EXPECT_EQ(only<event::RequestStarted>(d.update(at(4), kA, {q(1, 10, 10)})).size(), 1u);
  EXPECT_EQ(only<event::RequestFinished>(d.update(at(5), kA, {q(1, 10, 10)})).size(), 1u);
  EXPECT_TRUE(d.update(at(6), kA, {q(1, 0, 0)}).empty()) << "a reset is no work";
  EXPECT_EQ(d.stats().queue_resets, 1u);
  EXPECT_EQ(only<event::RequestStarted>(d.update(at(7), kA, {q(1, 0, 1)})).size(), 1u);
}

TEST(ActivityDetector, AProcessThatNeverIdlesHasOneOpenRequest) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 0, 0)});
  std::size_t started = 0, finished = 0, kernels = 0;
  for (int i = 1; i <= 1000; ++i) {
    // One kernel retires per sample and another is queued: rptr < wptr at every sample.
    auto ev = d.update(at(i * 100), kA, {q(1, i - 1, i + 1)});
    started += only<event::RequestStarted>(ev).size();
    finished += only<event::RequestFinished>(ev).size();
    kernels += only<event::KernelObserved>(ev).size();
  }
  EXPECT_EQ(started, 1u);
  EXPECT_EQ(finished, 0u);
  EXPECT_TRUE(d.busy(kA));
  EXPECT_GT(kernels, 900u) << "a busy queue keeps reporting kernel lengths";
}

TEST(ActivityDetector, SettleKeepsARequestOpenAcrossShortIdleGaps) {
  ActivityDetector d(ActivityDetectorConfig{.settle = 500us});
  d.update(at(0), kA, {q(1, 0, 0)});
  EXPECT_EQ(only<event::RequestStarted>(d.update(at(100), kA, {q(1, 0, 1)})).size(), 1u);
  EXPECT_TRUE(only<event::RequestFinished>(d.update(at(200), kA, {q(1, 1, 1)})).empty())
      << "idle for 0 us";
  EXPECT_TRUE(d.update(at(600), kA, {q(1, 1, 1)}).empty()) << "idle for 400 us";
  // New work inside the settle time: still the same request.
  EXPECT_TRUE(only<event::RequestStarted>(d.update(at(650), kA, {q(1, 2, 2)})).empty());
  EXPECT_TRUE(d.update(at(700), kA, {q(1, 2, 2)}).empty());
  EXPECT_TRUE(d.update(at(1100), kA, {q(1, 2, 2)}).empty()) << "idle for 400 us again";
  EXPECT_EQ(only<event::RequestFinished>(d.update(at(1200), kA, {q(1, 2, 2)})).size(), 1u);
  EXPECT_EQ(d.stats().requests, 1u);
}

TEST(ActivityDetector, RequestIdsAreUniquePerProcessAndAcrossProcesses) {
  ActivityDetector d;
  std::vector<uint64_t> ids;
  for (const auto& key : {kA, kB}) d.update(at(0), key, {q(1, 0, 0)});
  for (int r = 0; r < 3; ++r)
    for (const auto& key : {kA, kB}) {
      auto s = only<event::RequestStarted>(d.update(at(10 * r + 1), key, {q(1, r, r + 1)}));
      ASSERT_EQ(s.size(), 1u);
      EXPECT_EQ(s[0].key, key);
      ids.push_back(s[0].request);
      auto f = only<event::RequestFinished>(d.update(at(10 * r + 2), key, {q(1, r + 1, r + 1)}));
      ASSERT_EQ(f.size(), 1u);
      EXPECT_EQ(f[0].request, s[0].request);
    }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
}

TEST(ActivityDetector, KernelLengthsAreInferredFromRetirements) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 0, 0, 7)});
  // Two kernels submitted between 0 and 100 us; each runs 1000 us.
  d.update(at(100), kA, {q(1, 0, 2, 7)});  // head started at ~50
  for (int t = 200; t <= 1000; t += 100) EXPECT_TRUE(d.update(at(t), kA, {q(1, 0, 2, 7)}).empty());
  auto ev = d.update(at(1100), kA, {q(1, 1, 2, 7)});  // first retired at ~1050
  auto k = only<event::KernelObserved>(ev);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].gpu, 7u);
  EXPECT_EQ(k[0].key, kA);
  EXPECT_EQ(k[0].length, 1000us);
  for (int t = 1200; t <= 2000; t += 100) d.update(at(t), kA, {q(1, 1, 2, 7)});
  k = only<event::KernelObserved>(d.update(at(2100), kA, {q(1, 2, 2, 7)}));
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].length, 1000us);
}

TEST(ActivityDetector, PacketsRetiredBackToBackShareTheInterval) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 0, 0)});
  d.update(at(100), kA, {q(1, 0, 4)});                                        // head since ~50
  auto k = only<event::KernelObserved>(d.update(at(500), kA, {q(1, 4, 4)}));  // done by ~300
  ASSERT_EQ(k.size(), 4u);
  for (const auto& e : k) EXPECT_EQ(e.length, 62500ns) << "(300 - 50) us / 4";
}

TEST(ActivityDetector, NoLengthWithoutASeenStart) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 0, 2)});  // first sight: the head's start is unknown
  auto ev = d.update(at(100), kA, {q(1, 1, 2)});
  EXPECT_TRUE(only<event::KernelObserved>(ev).empty());
  // A packet submitted during the interval in which its predecessors retired may have left a gap.
  d.update(at(200), kA, {q(1, 2, 2)});
  d.update(at(300), kA, {q(1, 2, 3)});
  EXPECT_TRUE(only<event::KernelObserved>(d.update(at(400), kA, {q(1, 4, 4)})).empty());
  ActivityDetector off(ActivityDetectorConfig{.kernel_lengths = false});
  off.update(at(0), kA, {q(1, 0, 0)});
  off.update(at(100), kA, {q(1, 0, 1)});
  EXPECT_TRUE(only<event::KernelObserved>(off.update(at(500), kA, {q(1, 1, 1)})).empty());
}

TEST(ActivityDetector, ForgettingABusyProcessEndsItsRequest) {
  ActivityDetector d;
  d.update(at(0), kA, {q(1, 0, 0)});
  auto s = only<event::RequestStarted>(d.update(at(1), kA, {q(1, 0, 1)}));
  ASSERT_EQ(s.size(), 1u);
  auto f = only<event::RequestFinished>(d.forget(at(2), kA));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].request, s[0].request);
  EXPECT_FALSE(d.busy(kA));
  EXPECT_TRUE(d.forget(at(3), kA).empty()) << "nothing left to end";
  d.update(at(4), kB, {q(1, 0, 0)});
  EXPECT_TRUE(d.forget(at(5), kB).empty()) << "an idle process has no request";
}

}  // namespace
}  // namespace gpreempt::sched
