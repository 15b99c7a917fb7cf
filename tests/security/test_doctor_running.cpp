// `gpreempt doctor` reviews what the running gpreemptd trusts (its config as loaded), not only the
// file on disk: asked as root it gets the daemon's settings; asked as another user, whom the daemon
// shows only its own processes, it reviews the file and says why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "daemon_rig.h"
#include "fixtures.h"

namespace gpreempt::testing {
namespace {

nlohmann::json config_trust(const RunResult& r) {
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_object())
    for (const auto& c : doc.value("checks", nlohmann::json::array()))
      if (c.value("id", "") == "config_trust") return c;
  ADD_FAILURE() << "no config_trust check in: " << r.out << r.err;
  return nlohmann::json::object();
}

TEST(DoctorRunning, ReviewsTheSettingsInForceAndTheFilesChangesSince) {
  DaemonRig rig({"--shared"});
  const auto config = rig.file("gpreemptd.toml");
  std::ofstream(config) << "[daemon]\nsocket = \"" << rig.socket()
                        << "\"\nmetrics = \"0.0.0.0:0\"\n"
                           "[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = 0 }\n"
                           "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 65534 }\n";
  auto daemon = rig.start_daemon_from_config(config);
  ASSERT_TRUE(rig.status().is_object()) << daemon->stderr_text();
  const std::vector<std::string> doctor{bin("gpreempt").string(), "doctor", "--json", "--socket",
                                        rig.socket(), "--config", "/nonexistent.toml"};
  auto c = config_trust(run(doctor, rig.machine().env()));
  const std::string summary = c.value("summary", "");
  EXPECT_EQ(summary.rfind("running gpreemptd (pid ", 0), 0u) << summary;
  EXPECT_NE(summary.find(config.string()), std::string::npos) << summary;
  EXPECT_NE(summary.find("metrics listen on 0.0.0.0:0, beyond loopback"), std::string::npos) << summary;
  EXPECT_EQ(c.value("status", ""), "warn");

  // Fixed on disk, not reloaded: still in force, and doctor says a reload changes it.
  std::ofstream(config) << "[daemon]\nsocket = \"" << rig.socket()
                        << "\"\nmetrics = \"\"\n"
                           "[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = 0 }\n"
                           "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 65534 }\n";
  c = config_trust(run(doctor, rig.machine().env()));
  EXPECT_NE(c.value("summary", "").find("has changed since gpreemptd loaded it"), std::string::npos)
      << c.dump();

  if (::geteuid() != 0 || !can_run_as(65534, "gpreempt")) return;
  c = config_trust(run(doctor, rig.machine().env(), 65534));
  EXPECT_NE(c.value("summary", "").find("shows what it trusts only to root and its control_group"),
            std::string::npos)
      << c.dump();
}

}  // namespace
}  // namespace gpreempt::testing
