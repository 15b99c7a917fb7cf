// Attack: whoever may write gpreemptd's config decides who preempts whom. A config file that is
// group- or world-writable, or owned by someone other than root (or the daemon's own user), is
// refused; so are bounds that remove the guarantees a lower class keeps (a starvation floor of 0,
// an operator hold that never lets the held process run).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sched/config.h"
#include "sched/priority_policy.h"

namespace gpreempt::sched {
namespace {

using namespace std::chrono_literals;

struct TempConfig {
  std::string dir, path;
  explicit TempConfig(const std::string& text) {
    char tmpl[] = "/tmp/gpreempt-sec-XXXXXX";
    dir = ::mkdtemp(tmpl);
    path = dir + "/gpreemptd.toml";
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0644);
  }
  ~TempConfig() { std::filesystem::remove_all(dir); }
};

const char* kConfig = "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 1000 }\n";

std::string errors_of(const ConfigResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += e.to_string() + "\n";
  return s;
}

TEST(ConfigFileTrust, AWorldOrGroupWritableConfigIsRefused) {
  TempConfig f(kConfig);
  ASSERT_TRUE(check_config(f.path).config) << errors_of(check_config(f.path));
  for (mode_t mode : {0666, 0646, 0664, 0620}) {
    ::chmod(f.path.c_str(), mode);
    auto r = check_config(f.path);
    EXPECT_FALSE(r.config) << std::oct << mode;
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].line, 0);
    EXPECT_NE(r.errors[0].message.find((mode & S_IWOTH) ? "writable by its world"
                                                        : "writable by its group"),
              std::string::npos)
        << r.errors[0].to_string();
    EXPECT_NE(r.errors[0].message.find("chmod go-w"), std::string::npos);
  }
}

TEST(ConfigFileTrust, AConfigOwnedBySomeoneElseIsRefused) {
  // The rule itself, for every case: root's daemon takes only root's file; an unprivileged daemon
  // (tests, the simulator) its own or root's.
  EXPECT_EQ(config_file_problem(0, S_IFREG | 0644, 0), "");
  EXPECT_NE(config_file_problem(1000, S_IFREG | 0644, 0), "");
  EXPECT_EQ(config_file_problem(1000, S_IFREG | 0600, 1000), "");
  EXPECT_EQ(config_file_problem(0, S_IFREG | 0644, 1000), "");
  EXPECT_NE(config_file_problem(1001, S_IFREG | 0644, 1000), "");
  EXPECT_NE(config_file_problem(1000, S_IFREG | 0644, 0).find("chown root:root"),
            std::string::npos);
  // And through the file, where the suite runs as root.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another uid";
  TempConfig f(kConfig);
  ASSERT_EQ(::chown(f.path.c_str(), 65534, 65534), 0);
  auto r = check_config(f.path);
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("owned by uid 65534, not by root"), std::string::npos)
      << r.errors[0].to_string();
}

TEST(ConfigFileTrust, AStarvationFloorOfZeroIsRefused) {
  auto r = load_config(std::string(kConfig) + "[policy]\nstarvation_min_run_ms = 0\n", "z.toml");
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << errors_of(r);
  EXPECT_EQ(r.errors[0].to_string(),
            "z.toml:6: starvation_min_run_ms must be greater than 0 (it is every suspended "
            "process's guaranteed share of each window)");
}

// An operator hold with operator_overrides_guard = true: the hard bound resumes the held process
// after max_suspension; it then runs starvation_min_run before the hold takes it again.
TEST(ConfigFileTrust, AnOperatorHoldThatOverridesTheGuardKeepsTheFloor) {
  ArbiterConfig c;
  c.operator_overrides_guard = true;
  c.max_suspension = 500ms;
  c.starvation_min_run = 100ms;
  const Time t0{};
  std::map<ProcessKey, GpuMember> members;
  GpuMember& m = members[ProcessKey{10, 1}];
  m.key = {10, 1};
  m.class_name = "offline";
  m.operator_until = t0 + 3600s;
  // Suspended by the hold at t0, resumed by the hard bound at t0 + 500 ms.
  m.guard.suspended(t0);
  const Time resumed = t0 + 500ms;
  m.guard.resumed(resumed, true, c);
  m.state = MemberState::kRunning;
  auto d = decide(members, resumed + 1ms, c, true, 1);
  EXPECT_TRUE(d.suspend.empty()) << "re-suspended 1 ms after the hard bound: no floor";
  ASSERT_TRUE(d.next_check);
  EXPECT_EQ(*d.next_check, resumed + c.starvation_min_run);
  d = decide(members, resumed + c.starvation_min_run, c, true, 1);
  EXPECT_EQ(d.suspend.size(), 1u) << "after the floor the hold applies again";
}

}  // namespace
}  // namespace gpreempt::sched
