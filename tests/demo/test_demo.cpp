// `gpreempt demo` end to end, as the README's main command runs it: no /dev/kfd here, so it
// re-runs itself on a simulated machine, runs real workload processes and, for the preemption
// scenarios, a real gpreemptd child.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "common/child_process.h"
#include "fixtures.h"

namespace {

using gpreempt::ChildProcess;

std::string gpreempt_bin() { return (gpreempt::testing::binary_dir() / "bin" / "gpreempt").string(); }

const std::vector<std::string> kAll = {"online-alone",  "offline-alone",  "none",
                                       "gpreempt-hint", "gpreempt-early", "gpreempt-transparent"};

bool daemon_scenario(const std::string& n) {
  return n == "gpreempt-hint" || n == "gpreempt-early" || n == "gpreempt-transparent";
}

// One run of every scenario, small: the suite stays fast. Each assertion names its scenario.
TEST(Demo, EveryScenarioRunsAndTheDaemonScenariosSuspend) {
  ChildProcess demo({gpreempt_bin(), "demo", "--requests", "20", "--json"});
  ASSERT_EQ(demo.wait(), 0) << demo.output();
  const auto j = nlohmann::json::parse(demo.output());
  EXPECT_TRUE(j["machine"]["simulated"].get<bool>());
  EXPECT_EQ(j["requests"], 20);

  ASSERT_EQ(j["scenarios"].size(), kAll.size());
  for (std::size_t i = 0; i < kAll.size(); ++i) {
    const auto& s = j["scenarios"][i];
    const auto& name = kAll[i];
    EXPECT_EQ(s["name"], name);
    const bool online = name != "offline-alone";
    const bool offline = name != "online-alone";
    EXPECT_EQ(s.contains("online_latency_ms"), online) << name;
    EXPECT_EQ(s.contains("offline_iterations_per_s"), offline) << name;
    if (online) {
      EXPECT_EQ(s["online_requests"].get<uint64_t>(),
                s["online_latency_ms"]["count"].get<uint64_t>())
          << name;
      for (const char* k : {"p50", "p95", "p99"})
        EXPECT_GT(s["online_latency_ms"][k].get<double>(), 0) << name << " " << k;
      EXPECT_LE(s["online_latency_ms"]["p50"].get<double>(), s["online_latency_ms"]["p99"].get<double>());
    }
    if (offline) {
      EXPECT_GT(s["offline_iterations_per_s"].get<double>(), 0) << name;
    }

    EXPECT_EQ(s.contains("gpreemptd"), daemon_scenario(name)) << name;
    if (name == "none") {
      EXPECT_EQ(s["simulated_suspends"], 0)
          << "nothing may suspend the offline job without control";
    }
    if (!daemon_scenario(name)) continue;
    const auto& d = s["gpreemptd"];
    EXPECT_EQ(d["exit_code"], 0) << name << ": gpreemptd stopped by SIGTERM exits 0";
    EXPECT_EQ(d["trigger"], name == "gpreempt-transparent" ? "transparent" : "hint") << name;
    EXPECT_GT(d["suspensions"].get<uint64_t>(), 0u) << name << ": online requests must suspend";
    EXPECT_GT(d["suspended_s"].get<double>(), 0) << name;
    // The simulated GPU saw the daemon's suspends, and the demo's latency figures are theirs.
    EXPECT_GT(s["simulated_suspends"].get<uint64_t>(), 0u) << name;
    EXPECT_EQ(d["suspend_ms"]["count"], s["simulated_suspends"]) << name;
    if (name != "gpreempt-transparent") {
      EXPECT_GT(d["hint_to_suspend_us"]["count"].get<uint64_t>(), 0u) << name;
      EXPECT_EQ(d["online_class"]["request_latency_ms"]["count"], s["online_requests"])
          << name << ": every request was hinted";
    }
  }
}

TEST(Demo, AMissingGpreemptdIsAClearError) {
  ChildProcess demo({gpreempt_bin(), "demo", "--quick", "--scenarios", "gpreempt-hint", "--gpreemptd",
                     "/nonexistent/gpreemptd", "--json"});
  EXPECT_EQ(demo.wait(), 1);
  const auto j = nlohmann::json::parse(demo.output());
  const std::string msg = j["error"]["message"];
  EXPECT_NE(msg.find("through gpreemptd"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/nonexistent/gpreemptd"), std::string::npos) << msg;
  // Scenarios without the daemon do not need it.
  ChildProcess alone({gpreempt_bin(), "demo", "--requests", "5", "--scenarios", "online-alone",
                      "--gpreemptd", "/nonexistent/gpreemptd", "--json"});
  ASSERT_EQ(alone.wait(), 0) << alone.output();
  EXPECT_EQ(nlohmann::json::parse(alone.output())["scenarios"].size(), 1u);
}

// The header names the GPU as people know it (from the PCI device id), not by the topology's ASIC
// string, which is "ip discovery" on every MI300 — real or simulated.
TEST(Demo, TheMachineIsNamedByItsProductNotTheTopologyAsicName) {
  ChildProcess demo({gpreempt_bin(), "demo", "--requests", "5", "--scenarios", "online-alone", "--json"});
  ASSERT_EQ(demo.wait(), 0) << demo.output();
  const auto j = nlohmann::json::parse(demo.output());
  const std::string description = j["machine"]["description"];
  EXPECT_EQ(description.rfind("a simulated AMD Instinct MI308X (gfx942), ", 0), 0u) << description;
  EXPECT_EQ(description.find("ip discovery"), std::string::npos) << description;
  ASSERT_FALSE(j["machine"]["gpus"].empty());
  for (const auto& g : j["machine"]["gpus"]) {
    EXPECT_EQ(g["product"], "AMD Instinct MI308X") << g;
    EXPECT_EQ(g["name"], "ip discovery") << "the topology's own name stays as the kernel writes it";
  }
}

TEST(Demo, BadArgumentsAreUsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--requests", "0"},
                                               {"--quick", "--requests", "10"},
                                               {"--scenarios", "gpreempt-hint,no_such"},
                                               {"--scenarios", ""},
                                               {"--rate", "0"}}) {
    std::vector<std::string> argv = {gpreempt_bin(), "demo"};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess demo(argv);
    EXPECT_EQ(demo.wait(), 2) << args[0];
    EXPECT_EQ(demo.output(), "") << "nothing ran";
  }
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
    std::vector<std::string> argv = {gpreempt_bin(), "demo", "--quick"};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess demo(argv);
    EXPECT_EQ(demo.wait(), 2) << args[0] << " " << args[1];
    EXPECT_EQ(demo.output(), "") << "nothing ran";
  }
}

// An LLM workload given on the wrong side is refused with a message that says which side it
// belongs to; the server's batch is its own; gpreempt-early needs host pre-processing to
// announce; the demo's former scenario names are refused with their new ones.
TEST(Demo, LlmWorkloadsOnTheWrongSideOrWithoutTheirOptionsAreClearUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--online", "llm-finetune"}, "'llm-finetune' is an offline workload: give it as --offline"},
      {{"--offline", "llm-serve"}, "'llm-serve' is an online workload: give it as --online"},
      {{"--online", "llm-serve", "--online-batch", "8"},
       "--online-batch does not apply to llm-serve"},
      {{"--online", "llm-serve", "--offline", "llm-finetune", "--scenarios",
        "gpreempt-hint,gpreempt-early"},
       "scenario gpreempt-early needs an online side with host pre-processing"},
      {{"--scenarios", "none,early_hint"},
       "scenario 'early_hint' is now called 'gpreempt-early'"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {gpreempt_bin(), "demo", "--quick", "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess demo(argv);
    EXPECT_EQ(demo.wait(), 2) << args[0] << " " << args[1];
    const auto j = nlohmann::json::parse(demo.output());
    const std::string got = j["error"]["message"];
    EXPECT_NE(got.find(message), std::string::npos) << got;
  }
}

TEST(Demo, HelpListsTheModelWorkloadsAndTheScenarios) {
  ChildProcess help({gpreempt_bin(), "demo", "--help"});
  ASSERT_EQ(help.wait(), 0);
  EXPECT_NE(help.output().find("online models:  resnet18, resnet50, linear512, mm4096\n"),
            std::string::npos)
      << help.output();
  EXPECT_NE(help.output().find("offline models: resnet50-train, resnet18-train, transformer-train, "
                               "linear1024-train, mm4000, mm8192x5, mm2048\n"),
            std::string::npos)
      << help.output();
  EXPECT_NE(help.output().find("  online LLM:  llm-serve (-m gpreempt.sim.serve"),
            std::string::npos)
      << help.output();
  EXPECT_NE(help.output().find("  offline LLM: llm-finetune (-m gpreempt.sim.finetune"),
            std::string::npos)
      << help.output();
  EXPECT_NE(
      help.output().find("  online-alone, offline-alone, none (both, nothing done),\n"
                         "  gpreempt-hint (both under gpreemptd;"),
      std::string::npos)
      << help.output();
}

}  // namespace
