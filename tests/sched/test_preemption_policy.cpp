#include <vector>

#include <gtest/gtest.h>

#include "sched/preemption_policy.h"

namespace {

using namespace gpreempt::sched;
using std::chrono::milliseconds;

struct RecordingActuator : OfflineActuator {
  std::vector<char> calls;  // 'S' suspend, 'R' resume
  int suspend_result = 0;
  int resume_result = 0;
  int suspend_offline() override {
    calls.push_back('S');
    return suspend_result;
  }
  int resume_offline() override {
    calls.push_back('R');
    return resume_result;
  }
};

PolicyConfig config() {
  PolicyConfig c;
  c.resume_after_idle = milliseconds(2);
  c.max_suspension = milliseconds(100);
  c.min_offline_run = milliseconds(20);
  return c;
}

TEST(PreemptionPolicy, SuspendsOnFirstRequestAndResumesAfterIdle) {
  RecordingActuator a;
  PreemptionPolicy p(config(), a);
  p.online_request_started(milliseconds(10));
  EXPECT_TRUE(p.offline_suspended());
  p.online_request_finished(milliseconds(15));
  EXPECT_TRUE(p.offline_suspended()) << "must wait resume_after_idle before resuming";
  ASSERT_TRUE(p.next_deadline());
  EXPECT_EQ(*p.next_deadline(), milliseconds(17));
  p.tick(milliseconds(17));
  EXPECT_FALSE(p.offline_suspended());
  EXPECT_EQ(a.calls, (std::vector<char>{'S', 'R'}));
  EXPECT_EQ(p.stats().suspended_total, milliseconds(7));
}

TEST(PreemptionPolicy, BackToBackRequestsDoNotFlap) {
  RecordingActuator a;
  PreemptionPolicy p(config(), a);
  p.online_request_started(milliseconds(0));
  p.online_request_finished(milliseconds(1));
  p.tick(milliseconds(2));  // idle 1 ms < 2 ms
  p.online_request_started(milliseconds(2));
  p.online_request_started(milliseconds(3));  // overlapping requests
  p.online_request_finished(milliseconds(4));
  EXPECT_TRUE(p.offline_suspended());
  p.online_request_finished(milliseconds(5));
  p.tick(milliseconds(7));
  EXPECT_EQ(a.calls, (std::vector<char>{'S', 'R'})) << "one suspend/resume pair for the burst";
}

TEST(PreemptionPolicy, BoundsStarvationThenGuaranteesOfflineProgress) {
  RecordingActuator a;
  PreemptionPolicy p(config(), a);
  p.online_request_started(milliseconds(0));
  EXPECT_EQ(*p.next_deadline(), milliseconds(100));
  p.tick(milliseconds(100));
  EXPECT_FALSE(p.offline_suspended()) << "max_suspension reached: forced resume";
  EXPECT_EQ(p.stats().forced_resumes, 1u);
  p.online_request_started(milliseconds(105));  // inside min_offline_run
  EXPECT_FALSE(p.offline_suspended());
  EXPECT_EQ(p.stats().skipped_suspends, 1u);
  EXPECT_EQ(*p.next_deadline(), milliseconds(120));
  p.tick(milliseconds(120));
  EXPECT_TRUE(p.offline_suspended()) << "online work still pending gets the GPU back";
  EXPECT_EQ(a.calls, (std::vector<char>{'S', 'R', 'S'}));
}

TEST(PreemptionPolicy, FailedSuspendLeavesStateRunningAndIsCounted) {
  RecordingActuator a;
  a.suspend_result = -3;  // -ESRCH
  PreemptionPolicy p(config(), a);
  p.online_request_started(milliseconds(0));
  EXPECT_FALSE(p.offline_suspended());
  EXPECT_EQ(p.stats().failed_suspends, 1u);
  EXPECT_FALSE(p.next_deadline());
}

TEST(PreemptionPolicy, ReleaseResumesWhateverTheState) {
  RecordingActuator a;
  PreemptionPolicy p(config(), a);
  p.release(milliseconds(0));
  EXPECT_TRUE(a.calls.empty()) << "nothing to resume";
  p.online_request_started(milliseconds(1));
  p.release(milliseconds(3));
  EXPECT_FALSE(p.offline_suspended());
  EXPECT_EQ(a.calls, (std::vector<char>{'S', 'R'}));
}

TEST(PreemptionPolicy, FailedResumeStillEndsTheSuspension) {
  RecordingActuator a;
  a.resume_result = -5;
  PreemptionPolicy p(config(), a);
  p.online_request_started(milliseconds(0));
  p.online_request_finished(milliseconds(1));
  p.tick(milliseconds(3));
  EXPECT_FALSE(p.offline_suspended());
  EXPECT_EQ(p.stats().failed_resumes, 1u);
}

}  // namespace
