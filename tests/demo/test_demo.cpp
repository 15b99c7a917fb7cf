// `gpreempt demo` end to end, as the README's main command runs it: no /dev/kfd here, so it
// re-runs itself on a simulated machine, runs real workload processes and a real controller.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/child_process.h"
#include "fixtures.h"

namespace {

using gpreempt::ChildProcess;

std::string gpreempt_bin() { return (gpreempt::testing::binary_dir() / "bin" / "gpreempt").string(); }

TEST(Demo, JsonHasEveryScenarioAndThePreemptionSummary) {
  ChildProcess demo({gpreempt_bin(), "demo", "--duration", "1", "--json"});
  ASSERT_EQ(demo.wait(), 0) << demo.output();
  const auto j = nlohmann::json::parse(demo.output());
  EXPECT_TRUE(j["machine"]["simulated"].get<bool>());

  const std::vector<std::string> names = {"online_alone", "offline_alone", "no_control", "gpreempt"};
  ASSERT_EQ(j["scenarios"].size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& s = j["scenarios"][i];
    EXPECT_EQ(s["name"], names[i]);
    const bool online = names[i] != "offline_alone";
    const bool offline = names[i] != "online_alone";
    EXPECT_EQ(s.contains("online_latency_ms"), online) << names[i];
    EXPECT_EQ(s.contains("offline_iterations_per_s"), offline) << names[i];
    if (online) {
      for (const char* k : {"p50", "p95", "p99"}) {
        EXPECT_GT(s["online_latency_ms"][k].get<double>(), 0) << names[i] << " " << k;
      }
      EXPECT_LE(s["online_latency_ms"]["p50"].get<double>(), s["online_latency_ms"]["p99"].get<double>());
    }
    if (offline) {
      EXPECT_GT(s["offline_iterations_per_s"].get<double>(), 0) << names[i];
    }
  }

  const auto& p = j["preemption"];
  EXPECT_GT(p["count"].get<uint64_t>(), 0u) << "online requests must have caused suspensions";
  EXPECT_EQ(p["suspend_ms"]["count"].get<uint64_t>(), p["count"].get<uint64_t>());
  EXPECT_EQ(p["resume_ms"]["count"], p["suspend_ms"]["count"]) << "every suspension was resumed";
  for (const char* k : {"p50", "p95", "p99"}) {
    EXPECT_GT(p["suspend_ms"][k].get<double>(), 0) << k;
    EXPECT_GT(p["resume_ms"][k].get<double>(), 0) << k;
  }
  EXPECT_TRUE(p["errors"].empty()) << p["errors"].dump();
}

TEST(Demo, BadArgumentsAreUsageErrors) {
  ChildProcess demo({gpreempt_bin(), "demo", "--duration", "0"});
  EXPECT_EQ(demo.wait(), 2);
  ChildProcess both({gpreempt_bin(), "demo", "--grace", "1", "--grace-us", "5"});
  EXPECT_EQ(both.wait(), 2);
}

// Unknown workloads are refused before any simulated machine starts, naming the valid ones of
// that side: the models and the presets. (stderr is inherited: the message goes to the ctest log.)
TEST(Demo, UnknownWorkloadsAndBatchesOfPresetsAreUsageErrors) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--online", "no-such-model"},
        {"--offline", "resnet18"},                          // an online model on the offline side
        {"--online", "resnet50-train"},                     // and the other way round
        {"--offline", "gemm2048", "--offline-batch", "8"},  // presets have no batch size
        {"--online", "resnet18", "--online-batch", "0"}}) {
    std::vector<std::string> argv = {gpreempt_bin(), "demo", "--duration", "0.1"};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess demo(argv);
    EXPECT_EQ(demo.wait(), 2) << args[0] << " " << args[1];
    EXPECT_EQ(demo.output(), "") << "nothing ran";
  }
}

TEST(Demo, HelpListsTheModelWorkloads) {
  ChildProcess help({gpreempt_bin(), "demo", "--help"});
  ASSERT_EQ(help.wait(), 0);
  EXPECT_NE(help.output().find("online models:  resnet18, resnet50, linear512\n"),
            std::string::npos)
      << help.output();
  EXPECT_NE(help.output().find("offline models: resnet50-train, resnet18-train, transformer-train, "
                               "linear1024-train, mm4000, mm2048\n"),
            std::string::npos)
      << help.output();
}

}  // namespace
