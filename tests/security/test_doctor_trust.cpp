// `gpreempt doctor` shows what a config trusts: the single-tenant acknowledgement and the classes
// relying on it, rootless container roots, a metrics address beyond loopback, the control group.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "doctor/config_trust.h"
#include "daemon_config.h"
#include "trust_document.h"

namespace gpreempt::doctor {
namespace {

struct TempConfig {
  std::string dir, path;
  explicit TempConfig(const std::string& text) {
    char tmpl[] = "/tmp/gpreempt-doctor-XXXXXX";
    dir = ::mkdtemp(tmpl);
    path = dir + "/gpreemptd.toml";
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0644);
  }
  ~TempConfig() { std::filesystem::remove_all(dir); }
};

TEST(DoctorTrust, EveryWeakeningIsAWarning) {
  TempConfig f(
      "[daemon]\nmetrics = \"0.0.0.0:9464\"\ncontrol_group = \"gpu-ops\"\n"
      "podman_rootless_root = \"%h/.local/share/containers/storage\"\n"
      "[policy]\nsingle_tenant = true\n"
      "[[class]]\nname = \"online\"\npriority = 10\nmatch = { cmdline = \"*serve*\" }\n"
      "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" "
      "}\n");
  const CheckResult r = check_config_trust(f.path);
  EXPECT_EQ(r.id, "config_trust");
  EXPECT_EQ(r.status, Status::kWarn) << r.summary;
  for (const char* said :
       {"single_tenant = true: every local user is trusted", "class 'online' (cmdline=*serve*)",
        "rootless container roots are read", "metrics listen on 0.0.0.0:9464, beyond loopback",
        "group 'gpu-ops' (may suspend every class)"})
    EXPECT_NE(r.summary.find(said), std::string::npos) << said << "\n" << r.summary;
  EXPECT_FALSE(r.fix.empty());
}

TEST(DoctorTrust, TheShippedSystemdConfigPasses) {
  TempConfig f(
      "[daemon]\nmetrics = \"127.0.0.1:9464\"\n"
      "[[class]]\nname = \"online\"\npriority = 10\nmatch = { cgroup = \"/online.slice/*\" }\n"
      "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" "
      "}\n");
  const CheckResult r = check_config_trust(f.path);
  EXPECT_EQ(r.status, Status::kPass) << r.summary;
  EXPECT_NE(r.summary.find("control: root only"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("single_tenant false"), std::string::npos) << r.summary;
}

TEST(DoctorTrust, AConfigTheDaemonWouldRefuseFailsAndNoneSkips) {
  TempConfig f(
      "[[class]]\nname = \"online\"\npriority = 10\nmatch = { cmdline = \"*serve*\" }\n"
      "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 5 }\n");
  EXPECT_EQ(check_config_trust(f.path).status, Status::kFail);
  ::chmod(f.path.c_str(), 0666);
  EXPECT_EQ(check_config_trust(f.path).status, Status::kFail);
  EXPECT_EQ(check_config_trust(f.dir + "/none.toml").status, Status::kSkip);
}


constexpr const char* kSingleTenant =
    "[policy]\nsingle_tenant = true\n"
    "[[class]]\nname = \"online\"\npriority = 10\nmatch = { cmdline = \"*serve*\" }\n"
    "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" }\n";
constexpr const char* kByCgroup =
    "[[class]]\nname = \"online\"\npriority = 10\nmatch = { cgroup = \"/online.slice/*\" }\n"
    "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" }\n";

// What a running gpreemptd's full status says about the config it loaded from `path`.
RunningDaemon running(const std::string& path) {
  const auto loaded = gpreemptd::check_daemon_config(path);
  EXPECT_TRUE(loaded.config.has_value()) << path;
  RunningDaemon d;
  d.socket = "/run/gpreempt/gpreemptd.sock";
  d.status = nlohmann::ordered_json{
      {"daemon",
       {{"pid", 42}, {"config_path", path}, {"view", "full"},
        {"trust", gpreemptd::trust_document(*loaded.config)}}}};
  return d;
}

TEST(DoctorTrust, TheRunningDaemonsSettingsAreReviewedAndAFileChangedSinceIsAWarning) {
  TempConfig loaded(kSingleTenant);
  const RunningDaemon d = running(loaded.path);
  // --config names another file, which the running daemon's settings take precedence over.
  TempConfig other(kByCgroup);
  CheckResult r = check_config_trust(other.path, &d);
  EXPECT_EQ(r.status, Status::kWarn) << r.summary;
  EXPECT_EQ(r.summary.rfind("running gpreemptd (pid 42, " + loaded.path + ")", 0), 0u) << r.summary;
  EXPECT_NE(r.summary.find("single_tenant = true"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("has changed"), std::string::npos) << r.summary;

  // The file fixed on disk but not reloaded: what is in force is still single-tenant, and the
  // reviewer is told a reload will change it.
  std::ofstream(loaded.path) << kByCgroup;
  r = check_config_trust(other.path, &d);
  EXPECT_EQ(r.status, Status::kWarn) << r.summary;
  EXPECT_NE(r.summary.find("single_tenant = true"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find(loaded.path + " has changed since gpreemptd loaded it"), std::string::npos)
      << r.summary;

  // In force and on disk the same trusted config: PASS.
  const RunningDaemon fixed = running(loaded.path);
  EXPECT_EQ(check_config_trust(other.path, &fixed).status, Status::kPass);
}

TEST(DoctorTrust, WithoutTheRunningSettingsTheFileIsReviewedAndDoctorSaysWhy) {
  TempConfig f(kSingleTenant);
  RunningDaemon own_view;
  own_view.socket = "/run/gpreempt/gpreemptd.sock";
  own_view.status = nlohmann::ordered_json{{"daemon", {{"pid", 42}, {"view", "own_processes"}}}};
  CheckResult r = check_config_trust(f.path, &own_view);
  EXPECT_EQ(r.status, Status::kWarn) << r.summary;
  EXPECT_NE(r.summary.find("shows what it trusts only to root and its control_group; this is the file"),
            std::string::npos)
      << r.summary;
  RunningDaemon away;
  away.socket = "/nowhere.sock";
  away.error = "cannot connect";
  r = check_config_trust(f.path, &away);
  EXPECT_NE(r.summary.find("no gpreemptd answers at /nowhere.sock (cannot connect); this is the file it would load"),
            std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("single_tenant = true"), std::string::npos) << r.summary;
}

}  // namespace
}  // namespace gpreempt::doctor
