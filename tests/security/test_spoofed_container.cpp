// Attack: a user names a cgroup in their own delegated subtree like a victim's container
// (`docker-<victim-id>.scope` under user@UID.service, or under a service given Delegate=yes) to
// inherit the victim's container, and so its container rule and its pod.
#include <gtest/gtest.h>

#include "discovery/proc_parse.h"
#include "sched/cgroup_identity.h"
#include "sched/match_rule.h"

namespace gpreempt::sched {
namespace {

const std::string kVictim(64, 'a');
const std::string kPod = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

ProcessFacts in_cgroup(const std::string& path) {
  ProcessFacts p;
  p.key = {4242, 1};
  p.uid = 1000;
  p.cgroups = {path};
  return p;
}

TEST(SpoofedContainer, AUsersLookAlikeCgroupIsNotTheVictimsContainer) {
  const std::string spoofs[] = {
      // systemd's user manager delegates this subtree to uid 1000.
      "/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" + kVictim + ".scope",
      "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope/docker-" + kVictim +
          ".scope",
      // A service run with Delegate=yes owns its subtree.
      "/system.slice/job.service/docker-" + kVictim + ".scope",
      "/system.slice/job.service/" + kVictim,
      // A pod look-alike under the user's own tree.
      "/user.slice/user-1000.slice/user@1000.service/kubepods/pod" + kPod + "/" + kVictim,
      "/user.slice/user-1000.slice/session-3.scope/docker/" + kVictim,
  };
  MatchRule by_id;
  by_id.container = *Glob::parse(kVictim.substr(0, 12), nullptr);
  MatchRule by_pod;
  by_pod.pod = *Glob::parse(kPod, nullptr);
  for (const auto& path : spoofs) {
    const auto id = cgroup_identity(path);
    EXPECT_FALSE(id.container_id && !id.rootless) << path;
    EXPECT_FALSE(id.pod_uid) << path;
    EXPECT_FALSE(discovery::container_id_from_cgroup("0::" + path + "\n")) << path;
    EXPECT_FALSE(by_id.matches(in_cgroup(path))) << path;
    EXPECT_FALSE(by_pod.matches(in_cgroup(path))) << path;
  }
  // The victim's real cgroups still are.
  for (const auto& real : {"/system.slice/docker-" + kVictim + ".scope", "/docker/" + kVictim,
                           "/kubepods/burstable/pod" + kPod + "/" + kVictim}) {
    EXPECT_EQ(cgroup_identity(real).container_id, kVictim) << real;
    EXPECT_TRUE(by_id.matches(in_cgroup(real))) << real;
  }
}

TEST(SpoofedContainer, ARootlessIdIsOnlyItsUsersClaim) {
  const std::string rootless =
      "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kVictim + ".scope";
  const auto id = cgroup_identity(rootless);
  ASSERT_TRUE(id.container_id);
  EXPECT_TRUE(id.rootless);
  EXPECT_EQ(id.user_manager_uid, 1000u);
  MatchRule by_id;
  by_id.container = *Glob::parse(kVictim, nullptr);
  EXPECT_FALSE(by_id.matches(in_cgroup(rootless)));
}

}  // namespace
}  // namespace gpreempt::sched
