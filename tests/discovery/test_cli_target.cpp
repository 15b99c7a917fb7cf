// Commands pointed at the wrong process, and the conventions every executable shares, run as a user
// would: under `kfdsim run`, a real shell starts a workload and names itself (the usual mistake:
// the launcher, not the GPU process) — the commands must fail, say why, and point at the child.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_run.h"

namespace gt = gpreempt::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path bin_dir() { return fs::path(gt::gpreempt_exe()).parent_path(); }

// `script` runs under `sh` on a private simulated machine; $WL is the workload, $GP gpreempt.
gt::CliResult on_machine(const std::string& script) {
  const fs::path machine = fs::temp_directory_path() / ("gpreempt_target_m_" + std::to_string(::getpid()));
  const std::string env = "WL=" + (bin_dir() / "gpreempt-workload").string() + " GP=" + gt::gpreempt_exe();
  auto r = gt::run_shell("KFDSIM_DIR=" + machine.string() + " " + env + " " + (bin_dir() / "kfdsim").string() +
                         " run --hardware instant -- sh -c '" + script + "'");
  fs::remove_all(machine);
  return r;
}

}  // namespace

TEST(CliTarget, TheLauncherShellIsRefusedAndItsChildSuggested) {
  // The shell waits until its child has a queue (polling the real condition, bounded), then
  // points every command at itself: $$ is the shell, $! the workload.
  const std::vector<std::string> commands = {"suspend --pid $$ --for 0", "resume --pid $$", "queues --pid $$",
                                             "bench preempt --pid $$ --cycles 1", "map --pid $$"};
  std::string script =
      "$WL offline --preset toy-offline --duration 60 >/dev/null & "
      "i=0; until $GP queues --pid $! --sysfs >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 3000 ] && break; done; "
      "echo shell=$$ child=$!; ";
  for (std::size_t i = 0; i < commands.size(); ++i)
    script += "echo \"=== " + std::to_string(i) + "\"; $GP " + commands[i] + " --json 2>&1; echo rc=$?; ";
  script += "kill $!";
  const auto r = on_machine(script);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("shell=(\\d+) child=(\\d+)"))) << r.out << r.err;
  const std::string shell = m[1], child = m[2];
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto from = r.out.find("=== " + std::to_string(i) + "\n");
    ASSERT_NE(from, std::string::npos) << r.out;
    const auto to = r.out.find("rc=", from);
    ASSERT_NE(to, std::string::npos) << r.out;
    const std::string part = r.out.substr(from, r.out.find('\n', to) - from);
    const std::string& cmd = commands[i];
    EXPECT_NE(part.find("rc=1"), std::string::npos) << cmd << ": " << part;
    EXPECT_NE(part.find("pid " + shell + " (sh) has not opened /dev/kfd"), std::string::npos) << cmd << ": " << part;
    EXPECT_NE(part.find(child + " (gpreempt-worklo"), std::string::npos) << cmd << ": " << part;
    EXPECT_NE(part.find("child of " + shell), std::string::npos) << cmd << ": " << part;
    // The JSON error document lists the child first.
    const auto start = part.find("\n{");
    ASSERT_NE(start, std::string::npos) << part;
    const auto j = json::parse(part.substr(start + 1, part.find("\n}", start) + 2 - start - 1));
    EXPECT_EQ(j["reason"], "no_kfd_process") << cmd;
    ASSERT_FALSE(j["candidates"].empty()) << cmd;
    EXPECT_EQ(j["candidates"][0]["pid"], std::stoi(child)) << cmd;
    EXPECT_EQ(j["candidates"][0]["relation"], "child") << cmd;
  }
}

TEST(CliTarget, ANonexistentPidIsNamed) {
  auto r = on_machine("$GP suspend --pid 2147483646 --for 0; echo rc=$?");
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("pid 2147483646 does not exist"), std::string::npos) << r.err;
}

TEST(CliConventions, RangeErrorsAreOneShortSentence) {
  auto r = gt::run_gpreempt("suspend --pid 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--pid: 0 is out of range: must be at least 1"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 200u) << r.err;
  auto w = gt::run_shell((bin_dir() / "gpreempt-workload").string() + " offline --preset cnn --duration 0");
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_NE(w.err.find("--duration: 0 is out of range: must be greater than 0"), std::string::npos) << w.err;
  EXPECT_LT(w.err.size(), 200u) << w.err;
  auto p = gt::run_shell((bin_dir() / "gpreempt-workload").string() + " offline --preset cnn --duration 1 --priority 16");
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("16 is out of range: must be between 0 and 15"), std::string::npos) << p.err;
}

TEST(CliConventions, EveryExecutablePrintsTheProjectVersion) {
  // The version's one source is project(VERSION) in the top-level CMakeLists.txt.
  const std::string cmake = gt::read_file(gt::source_dir() / "CMakeLists.txt");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cmake, m, std::regex("project\\(gpreempt VERSION ([0-9.]+)")));
  const std::string version = m[1];
  for (const std::string exe : {"gpreempt", "kfdsim", "kfdsimd", "gpreempt-workload"}) {
    auto r = gt::run_shell((bin_dir() / exe).string() + " --version");
    EXPECT_EQ(r.exit_code, 0) << exe << r.err;
    EXPECT_EQ(r.out, exe + " " + version + "\n") << exe;
  }
}

TEST(CliConventions, WorkloadAndKfdsimHelpHaveExamples) {
  for (const std::string exe : {"gpreempt-workload", "kfdsim"}) {
    auto r = gt::run_shell((bin_dir() / exe).string() + " --help");
    EXPECT_EQ(r.exit_code, 0) << exe;
    EXPECT_NE(r.out.find("Examples:\n"), std::string::npos) << exe << ": " << r.out;
  }
}
