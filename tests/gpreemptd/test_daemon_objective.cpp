// A class's objective on the running daemon: the action serving it, since when and why are in the
// status, top and the metrics, and the requests a p50 objective judges change it; an LLM class's
// TTFT and TPOT come from its hints' token reports.
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

// An LLM class: the daemon measures TTFT (begin → first `token`) and TPOT ((end − first token) /
// (tokens − 1)) from the hints alone, shows each goal in the status and top, and judges both.
TEST(GpreemptdObjective, TtftAndTpotAreMeasuredFromTheHintsTokens) {
  DaemonRig rig;
  const auto config = rig.file("llm.toml");
  std::ofstream(config) << (std::string("[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" }\n\n") +
                     "[[class]]\nname = \"chat\"\npriority = 10\nmatch = { uid = " +
                         std::to_string(::geteuid()) +
                         " }\nslo = { ttft_p50_ms = 60000, tpot_p50_ms = 60000, window_s = 1 }\n");
  auto daemon = rig.start_daemon({"--config", config.string()});
  auto online = rig.peer({});
  ASSERT_EQ(command(*online, "queue").get<std::string>().rfind("ok ", 0), 0u);
  ASSERT_EQ(command(*online, "connect"), "ok");
  auto objective = [&] {
    for (const auto& c : rig.status().value("classes", nlohmann::json::array()))
      if (c.value("name", "") == "chat") return c.value("objective", nlohmann::json());
    return nlohmann::json();
  };
  auto o = objective();
  ASSERT_TRUE(o.is_object()) << rig.status().dump();
  EXPECT_EQ(o["metric"], "ttft");
  ASSERT_EQ(o["goals"].size(), 2u) << o.dump();
  EXPECT_EQ(o["goals"][0]["metric"], "ttft");
  EXPECT_EQ(o["goals"][1]["metric"], "tpot");
  EXPECT_TRUE(o["goals"][0]["measured_ms"].is_null()) << "no token reported yet";

  // One request: begin, a wait, its first token, a wait, its end with 3 tokens. TTFT is at least
  // the first wait, TPOT at least half the second (two tokens after the first), whatever the
  // machine's speed: the daemon's clock runs while the peer sleeps.
  ASSERT_TRUE(command(*online, "begin 1")["ok"].get<bool>());
  ::usleep(50'000);
  ASSERT_TRUE(command(*online, "token 1")["ok"].get<bool>());
  ::usleep(100'000);
  ASSERT_TRUE(command(*online, "end 1 3")["ok"].get<bool>());
  o = objective();
  ASSERT_EQ(o["goals"].size(), 2u) << o.dump();
  ASSERT_TRUE(o["goals"][0]["measured_ms"].is_number()) << o.dump();
  ASSERT_TRUE(o["goals"][1]["measured_ms"].is_number()) << o.dump();
  EXPECT_GE(o["goals"][0]["measured_ms"].get<double>(), 50.0) << o.dump();
  EXPECT_GE(o["goals"][1]["measured_ms"].get<double>(), 50.0) << o.dump();
  EXPECT_EQ(o["goals"][0]["in_window"], 1);
  EXPECT_EQ(o["goals"][1]["in_window"], 1);

  // A token of a request never begun is refused, naming it; an old-style end still works.
  const auto bad = command(*online, "token 99");
  EXPECT_FALSE(bad["ok"].get<bool>()) << bad.dump();
  EXPECT_NE(bad.value("message", "").find("request 99 was not begun"), std::string::npos) << bad.dump();
  ASSERT_TRUE(command(*online, "begin 2")["ok"].get<bool>());
  ASSERT_TRUE(command(*online, "end 2")["ok"].get<bool>());

  // Requests meeting both goals for the window (a second), 20 TTFTs and 20 TPOTs: one step less.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int i = 10; objective()["action"] == "per_request" && std::chrono::steady_clock::now() < deadline;
       ++i) {
    const std::string id = std::to_string(i);
    ASSERT_TRUE(command(*online, "begin " + id)["ok"].get<bool>());
    ASSERT_TRUE(command(*online, "token " + id)["ok"].get<bool>());
    ASSERT_TRUE(command(*online, "end " + id + " 4")["ok"].get<bool>());
  }
  o = objective();
  EXPECT_EQ(o["action"], "late") << o.dump();
  EXPECT_NE(o["why"].get<std::string>().find("TTFT p50"), std::string::npos) << o.dump();
  EXPECT_NE(o["why"].get<std::string>().find("TPOT p50"), std::string::npos) << o.dump();

  const auto top = run({bin("gpreempt").string(), "top", "--once", "--socket", rig.socket()},
                       rig.machine().env());
  EXPECT_NE(top.out.find("objective chat: TTFT p50 <= 60000 ms over 1 s"), std::string::npos)
      << top.out << top.err;
  EXPECT_NE(top.out.find("objective chat: TPOT p50 <= 60000 ms over 1 s"), std::string::npos)
      << top.out;
  const auto ctl = run({bin("gpreempt").string(), "ctl", "status", "--socket", rig.socket()},
                       rig.machine().env());
  EXPECT_NE(ctl.out.find("TTFT p50 <= 60000 ms (measured"), std::string::npos) << ctl.out << ctl.err;
  EXPECT_NE(ctl.out.find("TPOT p50 <= 60000 ms (measured"), std::string::npos) << ctl.out;
}

}  // namespace
}  // namespace gpreempt::testing
