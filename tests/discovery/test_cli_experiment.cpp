// The user's queue-id experiment, end to end on the simulated GPU: two solo runs of one workload
// preset and one run together with another.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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
  const std::string cmd = "KFDSIM_DIR=" + machine.string() + " " + (bin / "kfdsim").string() +
                          " run --hardware gpu -- " + gt::gpreempt_exe() +
                          " experiment queue-ids --json --runs 2 --timeout 60 --out " + out.string() + " --model '" +
                          wl + " offline --preset toy-offline --duration 0.3' --concurrent '" + wl +
                          " online --preset toy-online --duration 0.6' 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int status = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << text;
  auto j = json::parse(text);  // one document: the workloads' output went to their log files
  ASSERT_EQ(j["runs"].size(), 2u);
  for (const auto& r : j["runs"]) {
    ASSERT_FALSE(r["queues"].empty());
    EXPECT_EQ(r["queues"][0]["queue_id"], 0);
    EXPECT_EQ(r["queues"][0]["type"], "compute");
  }
  ASSERT_EQ(j["together"].size(), 2u);
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
