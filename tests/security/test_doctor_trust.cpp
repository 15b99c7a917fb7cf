// `gpreempt doctor` shows what a config trusts: the single-tenant acknowledgement and the classes
// relying on it, rootless container roots, a metrics address beyond loopback, the control group.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "doctor/config_trust.h"

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

}  // namespace
}  // namespace gpreempt::doctor
