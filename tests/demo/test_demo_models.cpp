// `gpreempt demo` with PyTorch models as its sides (python3 -m gpreempt.sim.workload): the same
// four scenarios, results and preemption summary as with the C++ presets. Small batches and short
// scenarios: most of the time goes into starting the Python processes.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "common/child_process.h"
#include "fixtures.h"

namespace {

using gpreempt::ChildProcess;

std::string gpreempt_bin() {
  return (gpreempt::testing::binary_dir() / "bin" / "gpreempt").string();
}

bool torch_available() {
  ChildProcess py({GPREEMPT_TEST_PYTHON, "-c", "import torch, torchvision"});
  return py.wait() == 0;
}

nlohmann::json run_demo(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {gpreempt_bin(), "demo", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
#ifdef GPREEMPT_SANITIZER_PRELOAD
  // gpreemptd stays attached (ptrace) to the offline model process until it exits, and
  // LeakSanitizer aborts at the exit of a traced process; a Python model exits normally, so here
  // (as in test_sim_torch's traced child) leak checks are off. Every other ASan check stays on.
  const char* asan = std::getenv("ASAN_OPTIONS");
  argv.insert(argv.begin(), {"/usr/bin/env", std::string("ASAN_OPTIONS=") + (asan ? asan : "") +
                                                 ":detect_leaks=0"});
#endif
  ChildProcess demo(argv);
  const int rc = demo.wait();
  EXPECT_EQ(rc, 0) << demo.output();
  return rc == 0 ? nlohmann::json::parse(demo.output()) : nlohmann::json();
}

// Every scenario has its side's results, and under gpreemptd the hinted requests suspended the
// offline process: which is only possible if the offline side was still running (and
// classified) while the online side sent its requests.
void expect_complete(const nlohmann::json& j, const std::string& online,
                     const std::string& offline) {
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["online_preset"], online);
  EXPECT_EQ(j["offline_preset"], offline);
  const std::vector<std::string> names = {"online-alone", "offline-alone", "none", "gpreempt-hint"};
  ASSERT_EQ(j["scenarios"].size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& s = j["scenarios"][i];
    EXPECT_EQ(s["name"], names[i]);
    if (names[i] != "offline-alone") {
      EXPECT_GT(s["online_latency_ms"]["count"].get<uint64_t>(), 0u) << names[i];
      EXPECT_GT(s["online_latency_ms"]["p50"].get<double>(), 0) << names[i];
    }
    if (names[i] != "online-alone") {
      EXPECT_GT(s["offline_iterations_per_s"].get<double>(), 0) << names[i];
    }
  }
  const auto& d = j["scenarios"][3]["gpreemptd"];
  EXPECT_GT(d["suspensions"].get<uint64_t>(), 0u) << "online requests must have caused suspensions: "
                                                  << d.dump();
  EXPECT_EQ(d["online_class"]["request_latency_ms"]["count"],
            j["scenarios"][3]["online_latency_ms"]["count"])
      << "gpreempt.online_request() hinted every request";
  EXPECT_EQ(d["exit_code"], 0);
}

TEST(DemoModels, ResNet18OnlineAgainstResNet50Training) {
  if (!torch_available())
    GTEST_SKIP() << GPREEMPT_TEST_PYTHON << " cannot import torch and torchvision";
  const auto j =
      run_demo({"--online", "resnet18", "--offline", "resnet50-train", "--offline-batch", "2",
                "--requests", "20", "--scenarios", "online-alone,offline-alone,none,gpreempt-hint"});
  expect_complete(j, "resnet18", "resnet50-train");
}

// A model on one side and a preset on the other: the preset must not start its measured run (or
// end) while the model is still starting up.
TEST(DemoModels, ModelOnlineAgainstAPresetOffline) {
  if (!torch_available())
    GTEST_SKIP() << GPREEMPT_TEST_PYTHON << " cannot import torch and torchvision";
  const auto j = run_demo({"--online", "linear512", "--offline", "gemm2048", "--requests", "3",
                           "--scenarios", "online-alone,offline-alone,none,gpreempt-hint"});
  expect_complete(j, "linear512", "gemm2048");
}

// The LLM pair, short (3 requests; the fine-tuning job at batch 1): each scenario reports the
// server's TTFT, TPOT and output tokens/s and the fine-tuning job's iterations/s and tokens/s, and
// under gpreemptd serve's --hint marked every request.
TEST(DemoModels, LlmServerAgainstFineTuningReportsTtftTpotAndTokens) {
  if (!torch_available())
    GTEST_SKIP() << GPREEMPT_TEST_PYTHON << " cannot import torch and torchvision";
  const auto j = run_demo({"--online", "llm-serve", "--offline", "llm-finetune", "--offline-batch",
                           "1", "--requests", "3", "--scenarios", "online-alone,none,gpreempt-hint"});
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["scenarios"].size(), 3u);
  for (const auto& s : j["scenarios"]) {
    const std::string name = s["name"];
    for (const char* k : {"online_ttft_ms", "online_tpot_ms"}) {
      ASSERT_TRUE(s.contains(k)) << name << " " << k;
      EXPECT_EQ(s[k]["count"], 3) << name << " " << k;
      EXPECT_GT(s[k]["p50"].get<double>(), 0) << name << " " << k;
      EXPECT_LE(s[k]["p50"].get<double>(), s[k]["p99"].get<double>()) << name << " " << k;
    }
    EXPECT_EQ(s["online_requests"], 3) << name;
    EXPECT_GT(s["online_output_tokens_per_s"].get<double>(), 0) << name;
    if (name == "online-alone") continue;
    EXPECT_GT(s["offline_iterations_per_s"].get<double>(), 0) << name;
    EXPECT_GT(s["offline_tokens_per_s"].get<double>(), 0) << name;
  }
  const auto& d = j["scenarios"][2]["gpreemptd"];
  EXPECT_GT(d["suspensions"].get<uint64_t>(), 0u) << "serve's requests must have suspended: "
                                                  << d.dump();
  EXPECT_EQ(d["online_class"]["request_latency_ms"]["count"], 3) << "serve --hint marked each one";
  EXPECT_EQ(d["exit_code"], 0);
}

}  // namespace
