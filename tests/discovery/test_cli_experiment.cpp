// The user's queue-id experiment, end to end on the simulated GPU: two solo runs of one workload
// preset and one run together with another.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace gt = gpreempt::testing;
namespace fs = std::filesystem;
using nlohmann::json;

TEST(CliExperiment, QueueIdsOnTheSimulatedGpu) {
  const fs::path bin = fs::path(gt::gpreempt_exe()).parent_path();
  const fs::path out = fs::temp_directory_path() / ("gpreempt_qids_" + std::to_string(::getpid()));
  const fs::path machine = fs::temp_directory_path() / ("gpreempt_qids_m_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string wl = (bin / "gpreempt-workload").string();
  // Long enough to be seen by several 50 ms snapshots even on a loaded machine.
  const auto r = gt::run_shell("KFDSIM_DIR=" + machine.string() + " " + (bin / "kfdsim").string() +
                               " run --hardware gpu -- " + gt::gpreempt_exe() +
                               " experiment queue-ids --json --runs 2 --timeout 60 --out " + out.string() +
                               " --model '" + wl + " offline --preset toy-offline --duration 0.8' --concurrent '" + wl +
                               " online --preset toy-online --duration 1.2'");
  const std::string& text = r.out;
  const std::string& stderr_text = r.err;
  ASSERT_EQ(r.exit_code, 0) << text << stderr_text;
  auto j = json::parse(text);  // one document: the workloads' output went to their log files
  ASSERT_EQ(j["runs"].size(), 2u) << stderr_text;
  EXPECT_TRUE(j["complete"].get<bool>());
  EXPECT_TRUE(j["together_run"].get<bool>());
  EXPECT_EQ(j["solo_runs"], 2);
  for (const auto& run : j["runs"]) {
    EXPECT_FALSE(run["concurrent"].get<bool>());
    ASSERT_FALSE(run["queues"].empty());
    EXPECT_EQ(run["queues"][0]["queue_id"], 0);
    EXPECT_EQ(run["queues"][0]["type"], "compute");
  }
  ASSERT_EQ(j["together"].size(), 2u);
  for (const auto& run : j["together"]) EXPECT_TRUE(run["concurrent"].get<bool>());
  EXPECT_NE(j["together"][0]["pid"], j["together"][1]["pid"]);
  EXPECT_TRUE(j["answers"]["ids_stable"].get<bool>());
  EXPECT_TRUE(j["answers"]["ids_overlap_together"].get<bool>());
  EXPECT_FALSE(j["answers"]["identities_overlap_together"].get<bool>());
  EXPECT_TRUE(fs::exists(out / "result.json"));
  EXPECT_TRUE(fs::exists(out / "run1-during.json"));
  EXPECT_TRUE(fs::exists(out / "together-after.json"));
  EXPECT_NE(gt::read_file(out / "run1-A.log").find("iterations"), std::string::npos);
  fs::remove_all(out);
  fs::remove_all(machine);
}

TEST(CliExperiment, AModelNeverSeenOnTheGpuMakesThePartialResultIncomplete) {
  // `true` opens no /dev/kfd: the run is listed under "missed", left out of the answers, and the
  // command exits 1 after printing the partial result.
  const fs::path bin = fs::path(gt::gpreempt_exe()).parent_path();
  const fs::path out = fs::temp_directory_path() / ("gpreempt_qids_miss_" + std::to_string(::getpid()));
  const fs::path machine = fs::temp_directory_path() / ("gpreempt_qids_miss_m_" + std::to_string(::getpid()));
  const auto r = gt::run_shell("KFDSIM_DIR=" + machine.string() + " " + (bin / "kfdsim").string() + " run -- " +
                               gt::gpreempt_exe() + " experiment queue-ids --json --runs 1 --out " + out.string() +
                               " --model true");
  const std::string& err = r.err;
  EXPECT_EQ(r.exit_code, 1) << err;
  const auto j = json::parse(r.out);
  EXPECT_FALSE(j["complete"].get<bool>());
  ASSERT_EQ(j["missed"].size(), 1u);
  EXPECT_EQ(j["missed"][0]["run"], "run1");
  EXPECT_EQ(j["missed"][0]["model"], "A");
  EXPECT_TRUE(j["runs"].empty());
  // No solo run seen: no answer, never "false".
  EXPECT_TRUE(j["answers"]["ids_stable"].is_null()) << j["answers"];
  EXPECT_FALSE(j["together_run"].get<bool>());
  EXPECT_NE(err.find("never seen with KFD queues"), std::string::npos) << err;
  EXPECT_NE(err.find("partial result printed"), std::string::npos) << err;
  fs::remove_all(out);
  fs::remove_all(machine);
}

TEST(CliExperiment, AFailingModelFailsTheExperimentNamingTheRun) {
  const fs::path out = fs::temp_directory_path() / ("gpreempt_qids_fail_" + std::to_string(::getpid()));
  const auto r = gt::run_gpreempt("experiment queue-ids --json --runs 3 --out " + out.string() +
                                  " --model 'echo model broke; exit 3'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("run1: model A (echo model broke; exit 3) exited with status 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("last line of its output: model broke"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("run 2/3"), std::string::npos) << "the experiment went on after a failed run: " << r.err;
  const auto j = json::parse(r.out);  // the error document, no answers
  EXPECT_EQ(j.value("run", ""), "run1");
  EXPECT_EQ(j.value("exit_status", -1), 3);
  EXPECT_FALSE(j.contains("answers"));
  fs::remove_all(out);
}

TEST(CliExperiment, HelpExamplesUseWorkloadPresetsThatExist) {
  const fs::path bin = fs::path(gt::gpreempt_exe()).parent_path();
  const auto presets = json::parse(gt::run_shell((bin / "gpreempt-workload").string() + " presets --json").out);
  std::set<std::string> known;
  for (const auto& p : presets["presets"]) known.insert(p["name"].get<std::string>());
  ASSERT_FALSE(known.empty());
  const std::string help = gt::run_gpreempt("experiment queue-ids --help").out;
  const std::regex preset("--preset ([A-Za-z0-9_-]+)");
  int examples = 0;
  for (auto it = std::sregex_iterator(help.begin(), help.end(), preset); it != std::sregex_iterator(); ++it, ++examples)
    EXPECT_TRUE(known.count((*it)[1].str())) << "help names preset " << (*it)[1] << ", which gpreempt-workload does not have";
  EXPECT_GE(examples, 2) << help;
}
