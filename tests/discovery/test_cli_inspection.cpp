#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace gt = gpreempt::testing;
using nlohmann::json;

TEST(CliInspection, MapOnRealCaptureShowsPid94314FiveQueuesFourSlotsEach) {
  GPREEMPT_REQUIRE_SHARED();
  auto r = gt::run_gpreempt("map --offline --mqds " + gt::shared_file("realdata/debugfs/03_mi308x_rocm702_mqds.txt") +
                            " --hqds " + gt::shared_file("realdata/debugfs/01_mi308x_rocm702_hqds_full.txt") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = json::parse(r.out);
  ASSERT_EQ(j["queues"].size(), 5u);
  for (const auto& q : j["queues"]) {
    EXPECT_EQ(q["pid"], 94314);
    EXPECT_EQ(q["gpu_id"], 0xf7bc);
    EXPECT_EQ(q["type"], "compute");
    EXPECT_TRUE(q["queue_id_inferred"].get<bool>());
    ASSERT_EQ(q["hw_slots"].size(), 4u);
    std::set<int> xccs;
    for (const auto& s : q["hw_slots"]) {
      EXPECT_TRUE(s["active"].get<bool>());
      xccs.insert(s["xcc"].get<int>());
    }
    EXPECT_EQ(xccs, (std::set<int>{0, 1, 2, 3}));
    for (const char* k : {"queue_id", "ring_base", "rptr_address", "pipe_priority", "queue_priority", "hwq"})
      EXPECT_TRUE(q.contains(k)) << k;
  }
  EXPECT_TRUE(j["complete"].get<bool>());
}

TEST(CliInspection, MapHumanTableMarksInferredIds) {
  GPREEMPT_REQUIRE_SHARED();
  auto r = gt::run_gpreempt("map --offline --mqds " + gt::shared_file("realdata/debugfs/03_mi308x_rocm702_mqds.txt") +
                            " --hqds " + gt::shared_file("realdata/debugfs/01_mi308x_rocm702_hqds_full.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("94314  0*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0:0.2 1:0.2 2:0.2 3:0.2"), std::string::npos) << r.out;
}

TEST(CliInspection, MapWithoutAnySourceFails) {
  auto r = gt::run_gpreempt("map --offline");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no queue source"), std::string::npos) << r.err;
}

TEST(CliInspection, DecodeEveryDebugfsCapture) {
  GPREEMPT_REQUIRE_SHARED();
  for (auto [kind, file] : {std::pair{"hqds", "01_mi308x_rocm702_hqds_full.txt"},
                            std::pair{"hqds", "02_mi308x_rocm702_hqds_baseline_node2.txt"},
                            std::pair{"mqds", "03_mi308x_rocm702_mqds.txt"}}) {
    auto r = gt::run_gpreempt(std::string("decode ") + kind + " " + gt::shared_file("realdata/debugfs/") + file + " --json");
    EXPECT_EQ(r.exit_code, 0) << file << r.err;
    auto j = json::parse(r.out);
    EXPECT_TRUE(j["complete"].get<bool>()) << file;
  }
}

TEST(CliInspection, DecodeTruncatedStdinPrintsPartialResultAndFileLine) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string text = gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  const std::string cut = "/tmp/gpreempt_cli_cut_" + std::to_string(::getpid()) + ".txt";
  std::ofstream(cut) << text.substr(0, 5000);
  auto r = gt::run_gpreempt("decode mqds - --json", cut);
  std::remove(cut.c_str());
  EXPECT_EQ(r.exit_code, 1);
  auto j = json::parse(r.out);  // one document, the partial result
  EXPECT_FALSE(j["complete"].get<bool>());
  EXPECT_EQ(j["processes"][0]["pid"], 94314);
  EXPECT_FALSE(j["processes"][0]["queues"][0]["complete"].get<bool>());
  EXPECT_NE(r.err.find("<stdin>:60:"), std::string::npos) << r.err;
}

TEST(CliInspection, DecodePropertiesRlsAndUsageErrors) {
  GPREEMPT_REQUIRE_SHARED();
  auto p = gt::run_gpreempt("decode properties " + gt::shared_file("kfd/examples/sys_class_kfd_kfd/topology/nodes/1/properties") + " --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto j = json::parse(p.out);
  EXPECT_EQ(j["gfx_target"], "gfx90a");
  EXPECT_TRUE(j["gpu"].get<bool>());
  auto rls = gt::run_gpreempt("decode rls " + gt::shared_file("kfd/examples/rls.txt") + " --json");
  ASSERT_EQ(rls.exit_code, 0) << rls.err;
  EXPECT_EQ(json::parse(rls.out)["nodes"][0]["packets"][0]["opcode"], "MAP_PROCESS");
  EXPECT_EQ(gt::run_gpreempt("decode").exit_code, 2);
  EXPECT_EQ(gt::run_gpreempt("decode properties").exit_code, 2);
  EXPECT_EQ(gt::run_gpreempt("decode mqds /nonexistent/mqds").exit_code, 1);
  auto help = gt::run_gpreempt("decode mqds --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
}

TEST(CliInspection, PsOnFakeProcTree) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gpreempt_cli_ps_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "proc/321/fd");
  std::ofstream(root / "proc/321/status") << "Name:\tpython\nNSpid:\t321\t9\n";
  std::ofstream(root / "proc/321/cmdline") << std::string("python\0train.py\0", 16);
  std::ofstream(root / "proc/321/cgroup") << "0::/system.slice/docker-" << std::string(64, 'e') << ".scope\n";
  fs::create_symlink("/dev/kfd", root / "proc/321/fd/4");
  fs::create_directories(root / "kfd/proc/321/queues/0");
  std::ofstream(root / "kfd/proc/321/queues/0/type") << "0";
  std::ofstream(root / "kfd/proc/321/queues/0/gpuid") << "63420";
  std::ofstream(root / "kfd/proc/321/queues/0/size") << "65536";
  const std::string roots = " --proc " + (root / "proc").string() + " --sysfs " + (root / "kfd").string();
  auto r = gt::run_gpreempt("ps --json" + roots);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = json::parse(r.out);
  ASSERT_EQ(j["processes"].size(), 1u);
  EXPECT_EQ(j["processes"][0]["pid"], 321);
  EXPECT_EQ(j["processes"][0]["container_pid"], 9);
  EXPECT_EQ(j["processes"][0]["cmdline"][1], "train.py");
  EXPECT_EQ(j["processes"][0]["queues"][0]["gpu_id"], 0xf7bc);
  auto h = gt::run_gpreempt("ps --container eeee --host-pid-of 9 --json" + roots);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(json::parse(h.out)["host_pid"], 321);
  EXPECT_EQ(gt::run_gpreempt("ps --container ffff --host-pid-of 9" + roots).exit_code, 1);
  auto c = gt::run_gpreempt("ps --container-pid-of 321" + roots);
  EXPECT_EQ(c.out, "9\n");
  // watch: the first look reports what exists, one JSON object per line.
  auto w = gt::run_gpreempt("watch --json --count 1" + roots);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  std::istringstream lines(w.out);
  std::vector<json> events;
  for (std::string l; std::getline(lines, l);) events.push_back(json::parse(l));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["event"], "process_started");
  EXPECT_EQ(events[0]["pid"], 321);
  EXPECT_EQ(events[1]["event"], "queue_created");
  EXPECT_EQ(events[1]["queue_id"], 0);
  EXPECT_EQ(gt::run_gpreempt("watch --interval 0 --count 1" + roots).exit_code, 2);
  fs::remove_all(root);
}
