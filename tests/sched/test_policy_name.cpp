// `[policy] name`: gpreempt's rule, or none (observe only), chosen by the name the evaluation's
// baselines use; the evaluation-only names refused with the reason they cannot run in a daemon.
#include <gtest/gtest.h>

#include "sched/config.h"
#include "sched/policy_name.h"
#include "config_errors.h"
#include "sched_driver.h"

namespace gpreempt::sched::testing {
namespace {

std::string errors_of(const std::string& text) { return config_errors(text, "p.toml"); }

ArbiterConfig observe_only() {
  ArbiterConfig c;
  c.policy = PolicyName::kNone;
  return c;
}

Driver online_and_offline_on_gpu1(ArbiterConfig c) {
  Driver d(c);
  d.classify(10, "online", {1});
  d.classify(20, "offline", {1});
  return d;
}

TEST(PolicyNameConfig, GpreemptByDefaultAndNoneByName) {
  auto dflt = load_config("[policy]\nresume_after_idle_ms = 3\n", "p.toml");
  ASSERT_TRUE(dflt.config) << dflt.errors[0].to_string();
  EXPECT_EQ(dflt.config->policy.policy, PolicyName::kGpreempt);
  auto none = load_config("[policy]\nname = \"none\"\n", "p.toml");
  ASSERT_TRUE(none.config) << none.errors[0].to_string();
  EXPECT_EQ(none.config->policy.policy, PolicyName::kNone);
  EXPECT_STREQ(to_string(none.config->policy.policy), "none");
}

TEST(PolicyNameConfig, EvaluationOnlyAndUnknownNamesSayWhyWithFileAndLine) {
  EXPECT_EQ(errors_of("[policy]\n\nname = \"throttle\"\n"),
            "p.toml:3: policy \"throttle\" runs only in the evaluation (gpreempt-des): launch "
            "throttling holds back the process's own kernel launches, which a daemon cannot do "
            "from outside (expected \"gpreempt\" or \"none\")\n");
  EXPECT_NE(errors_of("[policy]\nname = \"partition\"\n").find("CU masks"), std::string::npos);
  EXPECT_NE(errors_of("[policy]\nname = \"oracle\"\n").find("only in the simulator"),
            std::string::npos);
  EXPECT_NE(errors_of("[policy]\nname = \"gpreempt-transparent\"\n")
                .find("trigger = \"transparent\""),
            std::string::npos);
  EXPECT_EQ(errors_of("[policy]\nname = \"fifo\"\n"),
            "p.toml:2: unknown policy \"fifo\" (expected \"gpreempt\" or \"none\")\n");
  EXPECT_EQ(errors_of("[policy]\nname = 1\n"),
            "p.toml:2: 'name' must be a string (\"gpreempt\" or \"none\"), not an integer\n");
}

TEST(PolicyNone, ARequestSuspendsNothingButIsCounted) {
  Driver d = online_and_offline_on_gpu1(observe_only());
  EXPECT_EQ(d.begin(10), Strings{});
  EXPECT_EQ(d.state(1, 20), MemberState::kRunning);
  EXPECT_EQ(d.s.gpu(1)->members().at(ProcessKey{10, 1}).active_requests, 1);
  EXPECT_EQ(d.advance(1s), Strings{});
  EXPECT_EQ(d.end(10), Strings{});
}

TEST(PolicyNone, AnOperatorHoldStillActs) {
  Driver d = online_and_offline_on_gpu1(observe_only());
  event::OperatorTarget t;
  t.class_name = "offline";
  EXPECT_EQ(d.send(event::OperatorSuspend{t, 50ms}),
            Strings({"suspend gpu1 [20@1] grace=0us operator"}));
}

TEST(PolicyNone, AReloadToNoneResumesWhatARequestSuspended) {
  Driver d = online_and_offline_on_gpu1(ArbiterConfig{});
  EXPECT_EQ(d.begin(10), Strings({"suspend gpu1 [20@1] grace=0us request"}));
  d.complete_suspend(1);
  std::vector<std::string> got;
  for (const auto& a : d.s.reconfigure(d.now, two_classes(), observe_only()))
    if (!std::holds_alternative<action::ArmTimer>(a)) got.push_back(describe(a));
  EXPECT_EQ(got, Strings({"resume gpu1 [20@1] idle"})) << "the request is still open";
}

}  // namespace
}  // namespace gpreempt::sched::testing
