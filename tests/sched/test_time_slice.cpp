// The time-slice policy: whose turn it is (a pure function of the time), the scheduler alternating
// classes on a GPU with its own timer, requests overriding a slice, and the config keys.
#include <gtest/gtest.h>

#include "sched/config.h"
#include "sched/time_slice.h"
#include "config_errors.h"
#include "sched_driver.h"

namespace gpreempt::sched::testing {
namespace {

TEST(TimeSlice, TurnsFollowTheCycleOfThePresentClasses) {
  const std::vector<TimeSlice> s{{"a", 30ms}, {"b", 20ms}};
  auto at = [&](Time t, std::set<std::string> present = {"a", "b"}) {
    auto turn = current_turn(s, present, t);
    return turn ? turn->class_name + "@" + std::to_string(turn->ends_at / 1ms) : "none";
  };
  EXPECT_EQ(at(0ms), "a@30");
  EXPECT_EQ(at(30ms - 1ns), "a@30");
  EXPECT_EQ(at(30ms), "b@50");
  EXPECT_EQ(at(55ms), "a@80");
  EXPECT_EQ(at(-10ms), "b@0");
  EXPECT_EQ(at(5ms, {"a"}), "none");  // one class alone has nothing to share with
  EXPECT_EQ(at(35ms, {"a", "b", "c"}), "b@50");
}

ArbiterConfig sliced() {
  ArbiterConfig c;
  c.time_slice = {{"online", 50ms}, {"offline", 50ms}};
  return c;
}

TEST(TimeSlice, ClassesAlternateOnTheSchedulersTimer) {
  Driver d(sliced());
  EXPECT_EQ(d.classify(10, "online", {1}), Strings{});
  EXPECT_EQ(d.classify(20, "offline", {1}), Strings({"suspend gpu1 [20@1] grace=0us time_slice"}));
  d.complete_suspend(1);
  EXPECT_EQ(d.advance(50ms - 1ns), Strings{});
  // The next holder is suspended before the next runner resumes: they never overlap.
  EXPECT_EQ(d.advance(1ns), Strings({"suspend gpu1 [10@1] grace=0us time_slice"}));
  EXPECT_EQ(d.complete_suspend(1), Strings({"resume gpu1 [20@1] time_slice"}));
  d.complete_resume(1);
  EXPECT_EQ(d.advance(50ms), Strings({"suspend gpu1 [20@1] grace=0us time_slice"}));
  EXPECT_EQ(d.complete_suspend(1), Strings({"resume gpu1 [10@1] time_slice"}));
  d.complete_resume(1);
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended);
}

TEST(TimeSlice, ARequestIsNeverHeldBackByASlice) {
  Driver d(sliced());
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  d.complete_suspend(1);
  d.advance(50ms);  // offline's turn: online suspended
  d.complete_suspend(1);
  d.complete_resume(1);
  d.advance(10ms);
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1] grace=0us request"}));
  EXPECT_EQ(d.complete_suspend(1), Strings({"resume gpu1 [10@1] idle"}));
}

TEST(TimeSlice, AGpuWithOneListedClassSlicesNothing) {
  Driver d(sliced());
  EXPECT_EQ(d.classify(20, "offline", {2}), Strings{});
  EXPECT_EQ(d.classify(21, "offline", {2}), Strings{});
  EXPECT_EQ(d.advance(1s), Strings{});
}

TEST(TimeSlice, AGpuOfItsOwnHasItsOwnCycleOrNone) {
  ArbiterConfig c = sliced();  // every GPU: 50 ms each
  c.gpu_time_slice[2] = {{"online", 20ms}, {"offline", 80ms}};
  c.gpu_time_slice[3] = {};  // no slicing on GPU 3
  Driver d(c);
  // GPU 1 follows the default cycle, GPU 2 its own: the offline turn starts at 20 ms there.
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  d.complete_suspend(1);
  d.classify(11, "online", {2});
  EXPECT_EQ(d.classify(21, "offline", {2}), Strings({"suspend gpu2 [21@1] grace=0us time_slice"}));
  d.complete_suspend(2);
  EXPECT_EQ(d.classify(12, "online", {3}), Strings{});
  EXPECT_EQ(d.classify(22, "offline", {3}), Strings{}) << "GPU 3 slices nothing";
  EXPECT_EQ(d.advance(20ms), Strings({"suspend gpu2 [11@1] grace=0us time_slice"}));
  EXPECT_EQ(d.complete_suspend(2), Strings({"resume gpu2 [21@1] time_slice"}));
  d.complete_resume(2);
  EXPECT_EQ(d.state(1, 20), MemberState::kSuspended) << "GPU 1's online turn lasts 50 ms";
  EXPECT_EQ(d.advance(30ms), Strings({"suspend gpu1 [10@1] grace=0us time_slice"}));
  EXPECT_EQ(d.complete_suspend(1), Strings({"resume gpu1 [20@1] time_slice"}));
  d.complete_resume(1);
  EXPECT_EQ(d.state(3, 12), MemberState::kRunning);
  EXPECT_EQ(d.state(3, 22), MemberState::kRunning);
}


TEST(TimeSliceConfig, ParsedInPriorityOrder) {
  auto r = load_config(
      "[policy]\ntime_slice = { offline_ms = 30, online_ms = 70 }\n"
      "operator_overrides_guard = true\n",
      "t.toml");
  ASSERT_TRUE(r.config) << r.errors[0].to_string();
  ASSERT_EQ(r.config->policy.time_slice.size(), 2u);
  EXPECT_EQ(r.config->policy.time_slice[0].class_name, "online");
  EXPECT_EQ(r.config->policy.time_slice[0].length, 70ms);
  EXPECT_EQ(r.config->policy.time_slice[1].length, 30ms);
  EXPECT_TRUE(r.config->policy.operator_overrides_guard);
}

TEST(TimeSliceConfig, PerGpuCyclesAndGpusWithout) {
  auto r = load_config(
      "[policy]\ntime_slice = { online_ms = 50, offline_ms = 50 }\n"
      "[[policy.gpu]]\ngpu_id = 63420\ntime_slice = { offline_ms = 90, online_ms = 10 }\n"
      "[[policy.gpu]]\ngpu_id = 12345\ntime_slice = {}\n",
      "t.toml");
  ASSERT_TRUE(r.config) << r.errors[0].to_string();
  const ArbiterConfig& p = r.config->policy;
  ASSERT_EQ(p.time_slice_for(63420).size(), 2u);
  EXPECT_EQ(p.time_slice_for(63420)[0].class_name, "online");  // priority order, as everywhere
  EXPECT_EQ(p.time_slice_for(63420)[0].length, 10ms);
  EXPECT_EQ(p.time_slice_for(63420)[1].length, 90ms);
  EXPECT_TRUE(p.time_slice_for(12345).empty());
  EXPECT_EQ(p.time_slice_for(7).size(), 2u);  // any other GPU: the default cycle
  EXPECT_EQ(p.time_slice_for(7)[0].length, 50ms);
  // Without a default, only the listed GPUs slice.
  auto only = load_config(
      "[[policy.gpu]]\ngpu_id = 5\ntime_slice = { online_ms = 10, offline_ms = 10 }\n", "t.toml");
  ASSERT_TRUE(only.config) << only.errors[0].to_string();
  EXPECT_TRUE(only.config->policy.time_slice_for(6).empty());
  EXPECT_EQ(only.config->policy.time_slice_for(5).size(), 2u);
}

TEST(TimeSliceConfig, PerGpuErrorsSayFileLineAndWhat) {
  EXPECT_EQ(config_errors("[[policy.gpu]]\ntime_slice = {}\n", "t.toml"),
            "t.toml:1: [[policy.gpu]] without a gpu_id\n");
  EXPECT_EQ(config_errors("[[policy.gpu]]\ngpu_id = 0\ntime_slice = {}\n", "t.toml"),
            "t.toml:2: gpu_id 0 out of range (a KFD gpu_id, as `gpreempt ctl status` lists it)\n");
  EXPECT_EQ(config_errors("[[policy.gpu]]\ngpu_id = 4\n", "t.toml"),
            "t.toml:1: [[policy.gpu]] for gpu_id 4 sets nothing (expected time_slice)\n");
  EXPECT_EQ(config_errors("[[policy.gpu]]\ngpu_id = 4\ntime_slice = {}\n"
                      "[[policy.gpu]]\ngpu_id = 4\ntime_slice = {}\n", "t.toml"),
            "t.toml:4: duplicate [[policy.gpu]] for gpu_id 4\n");
  EXPECT_EQ(config_errors("[[policy.gpu]]\ngpu_id = 4\nweight = 2\ntime_slice = {}\n", "t.toml"),
            "t.toml:3: unknown key 'weight' in [[policy.gpu]] (expected gpu_id, time_slice)\n");
  EXPECT_EQ(config_errors("[[policy.gpu]]\ngpu_id = 4\ntime_slice = { online_ms = 5 }\n", "t.toml"),
            "t.toml:3: time_slice (gpu_id 4) needs at least two classes to take turns (or {} for "
            "none on this GPU)\n");
  EXPECT_EQ(config_errors("[[policy.gpu]]\ngpu_id = 4\ntime_slice = { online_ms = 5, x_ms = 5 }\n", "t.toml"),
            "t.toml:3: time_slice (gpu_id 4) names class 'x', which is not defined (no [[class]] "
            "with that name)\n");
  EXPECT_EQ(config_errors("[policy]\nmax_suspension_ms = 100\n[[policy.gpu]]\ngpu_id = 4\n"
                      "time_slice = { online_ms = 150, offline_ms = 50 }\n", "t.toml"),
            "t.toml:5: time_slice (gpu_id 4): class 'offline' would wait 150 ms for its turn, more "
            "than max_suspension_ms (100)\n");
  EXPECT_EQ(config_errors("[policy]\ngpu = 3\n", "t.toml"),
            "t.toml:2: 'gpu' in [policy] must be an array of tables: write each as "
            "[[policy.gpu]]\n");
}

TEST(TimeSliceConfig, ErrorsSayFileLineAndWhat) {
  EXPECT_EQ(config_errors("[policy]\ntime_slice = { online_ms = 50, gpu_ms = 50 }\n", "t.toml"),
            "t.toml:2: time_slice names class 'gpu', which is not defined (no [[class]] with "
            "that name)\n");
  EXPECT_EQ(config_errors("[policy]\ntime_slice = { online_ms = 50 }\n", "t.toml"),
            "t.toml:2: time_slice needs at least two classes to take turns\n");
  EXPECT_EQ(config_errors("[policy]\ntime_slice = { online = 50, offline_ms = 5 }\n", "t.toml"),
            "t.toml:2: time_slice key 'online' must be CLASS_ms (e.g. offline_ms = 50)\n"
            "t.toml:2: time_slice needs at least two classes to take turns\n");
  EXPECT_EQ(config_errors("[policy]\ntime_slice = { online_ms = 0, offline_ms = 5 }\n", "t.toml"),
            "t.toml:2: time_slice 'online_ms' must be greater than 0\n"
            "t.toml:2: time_slice needs at least two classes to take turns\n");
  EXPECT_EQ(config_errors("[policy]\nmax_suspension_ms = 100\ntime_slice = { online_ms = 150, "
                      "offline_ms = 50 }\n", "t.toml"),
            "t.toml:3: time_slice: class 'offline' would wait 150 ms for its turn, more than "
            "max_suspension_ms (100)\n");
  EXPECT_EQ(config_errors("[policy]\ntime_slice = 5\n", "t.toml"),
            "t.toml:2: 'time_slice' must be a table, not an integer\n");
  EXPECT_EQ(config_errors("[policy]\noperator_overrides_guard = 1\n", "t.toml"),
            "t.toml:2: 'operator_overrides_guard' must be a boolean, not an integer\n");
}

}  // namespace
}  // namespace gpreempt::sched::testing
