// Attack, end to end on the simulated node: an unprivileged GPU user (uid 65534) names its process
// like a server (`exec -a serve`) and declares itself online (GPREEMPT_CLASS=online), then asks to
// preempt. Under the shipped systemd config it gets no preempting class, and the offline job of
// another user keeps running.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "daemon_rig.h"
#include "fixtures.h"

namespace gpreempt::testing {
namespace {

TEST(SelfNamedServer, GetsNoOnlineClassUnderTheShippedConfig) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the attacker as uid 65534";
  if (!can_run_as(65534, "gpreemptd_test_peer"))
    GTEST_SKIP() << "uid 65534 cannot reach the build's programs";
  DaemonRig rig({"--shared"});
  // deploy/systemd/gpreemptd.toml as shipped, on this machine's socket, without the metrics port
  // and the SCHED_FIFO priority a test does not need.
  std::string text = read_file(source_dir() / "deploy/systemd/gpreemptd.toml");
  text = std::regex_replace(text, std::regex("\nsocket = \"[^\"]*\""),
                            "\nsocket = \"" + rig.socket() + "\"");
  text = std::regex_replace(text, std::regex("\nmetrics = \"[^\"]*\""), "\nmetrics = \"\"");
  text = std::regex_replace(text, std::regex("\nrealtime_priority = [0-9]+"),
                            "\nrealtime_priority = 0");
  const auto config = rig.file("shipped.toml");
  std::ofstream(config) << text;
  auto daemon = rig.start_daemon({"--config", config.string()});
  auto victim = rig.workload({"GPREEMPT_CLASS=offline"});
  ASSERT_TRUE(eventually([&] { return rig.process(victim->pid())["class"] == "offline"; }))
      << rig.status().dump();

  auto attacker = rig.peer({"GPREEMPT_CLASS=online"}, 0, {"--pretend", "serve"}, 65534);
  // A GPU process (a queue), connected, asking for the GPU: the daemon classifies it on its first
  // message.
  EXPECT_EQ(command(*attacker, "queue").get<std::string>().rfind("ok ", 0), 0u);
  EXPECT_EQ(command(*attacker, "connect"), "ok");
  auto r = command(*attacker, "begin 1");
  EXPECT_FALSE(r["ok"].get<bool>()) << "the attacker may preempt: " << r.dump();
  EXPECT_NE(rig.process(attacker->pid())["class"], "online") << rig.status().dump();
  EXPECT_TRUE(rig.none_suspended(victim->pid()));
}

}  // namespace
}  // namespace gpreempt::testing
