// A class's objective on the running daemon: the action serving it, since when and why are in the
// status, top and the metrics, and the requests a p50 objective judges change it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "daemon_rig.h"
#include "fixtures.h"

namespace gpreempt::testing {
namespace {

TEST(GpreemptdObjective, TheActionServingAnObjectiveIsShownAndFollowsTheRequests) {
  DaemonRig rig;
  const auto config = rig.file("objective.toml");
  // A p50 objective judges 20 requests; one generous enough that they all meet it.
  std::ofstream(config) << (std::string("[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" }\n\n") +
                     "[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = " +
                         std::to_string(::geteuid()) + " }\nslo = { p50_ms = 10000, window_s = 1 }\n");
  auto daemon = rig.start_daemon({"--config", config.string()});
  auto online = rig.peer({});
  ASSERT_EQ(command(*online, "queue").get<std::string>().rfind("ok ", 0), 0u);
  ASSERT_EQ(command(*online, "connect"), "ok");
  auto objective = [&] {
    for (const auto& c : rig.status().value("classes", nlohmann::json::array()))
      if (c.value("name", "") == "online") return c.value("objective", nlohmann::json());
    return nlohmann::json();
  };
  auto o = objective();
  ASSERT_TRUE(o.is_object()) << rig.status().dump();
  EXPECT_EQ(o["action"], "per_request");
  EXPECT_EQ(o["percentile"], 50);
  EXPECT_EQ(o["target_ms"], 10000);
  EXPECT_NE(o["why"].get<std::string>().find("start"), std::string::npos) << o.dump();

  // Requests that all meet it for the window (a second) and 20 of them: one step less. No
  // sleep between them: however slow the machine, the window fills.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int i = 1; objective()["action"] == "per_request" && std::chrono::steady_clock::now() < deadline;
       ++i) {
    ASSERT_TRUE(command(*online, "begin " + std::to_string(i))["ok"].get<bool>());
    ASSERT_TRUE(command(*online, "end " + std::to_string(i))["ok"].get<bool>());
  }
  o = objective();
  EXPECT_EQ(o["action"], "late") << o.dump();
  EXPECT_NE(o["why"].get<std::string>().find("trying less"), std::string::npos) << o.dump();
  EXPECT_GE(o["changes"].get<int>(), 1);

  const auto top = run({bin("gpreempt").string(), "top", "--once", "--socket", rig.socket()},
                       rig.machine().env());
  EXPECT_NE(top.out.find("objective online: p50 <= 10000 ms over 1 s"), std::string::npos)
      << top.out << top.err;
  EXPECT_NE(top.out.find("action late"), std::string::npos) << top.out;
}

}  // namespace
}  // namespace gpreempt::testing
