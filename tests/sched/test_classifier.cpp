// Classification rules: every matcher kind, realistic cgroup layouts, process trees, precedence.
#include <gtest/gtest.h>

#include "sched/cgroup_identity.h"
#include "sched/classifier.h"
#include "sched/config.h"
#include "sched/glob.h"

namespace gpreempt::sched {
namespace {

const std::string kId = "3f4e2b1c9d8a7f6e5d4c3b2a19081726354f6e7d8c9b0a1f2e3d4c5b6a798081";
const std::string kPod = "0f1b5c64-8c1e-4c3c-9c5a-2b3a1e2f4d5c";
const std::string kPodEscaped = "0f1b5c64_8c1e_4c3c_9c5a_2b3a1e2f4d5c";

Glob glob(const std::string& p) {
  return *Glob::parse(p, nullptr);
}

ProcessFacts proc(int pid, std::vector<std::string> argv = {"python3", "train.py"}) {
  ProcessFacts f;
  f.key = {pid, 100};
  f.cmdline = std::move(argv);
  f.exe = "/usr/bin/python3.11";
  f.uid = 1000;
  f.user = "alice";
  return f;
}

std::optional<std::string> class_of(const Classifier& c, const ProcessFacts& p,
                                    const std::vector<ProcessFacts>& ancestors = {}) {
  auto r = c.classify(p, ancestors);
  return r ? std::optional(r->class_name) : std::nullopt;
}

Classifier one_class(MatchRule m) {
  ClassRule r{{"online", 10, {RequestSource::kHint}, std::nullopt}, {std::move(m)}};
  return Classifier({r});
}

TEST(Glob, Wildcards) {
  EXPECT_TRUE(glob("*serve*").matches("python3 -m vllm.entrypoints serve --port 80"));
  EXPECT_FALSE(glob("*serve*").matches("python3 train.py"));
  EXPECT_TRUE(glob("/kubepods*").matches("/kubepods.slice/a/b"));  // '*' crosses '/'
  EXPECT_TRUE(glob("rank?").matches("rank7"));
  EXPECT_FALSE(glob("rank?").matches("rank10"));
  EXPECT_TRUE(glob("gpu[0-3]").matches("gpu2"));
  EXPECT_FALSE(glob("gpu[!0-3]").matches("gpu2"));
  EXPECT_TRUE(glob("a\\*b").matches("a*b"));
  EXPECT_FALSE(glob("a\\*b").matches("axb"));
  EXPECT_TRUE(glob("[]]x").matches("]x"));
  EXPECT_TRUE(glob("*a*a*a*a*a*b").matches(std::string(20, 'a') + "b"));
  EXPECT_FALSE(glob("*a*a*a*a*a*b").matches(std::string(5000, 'a')));
}

TEST(Glob, MalformedPatternsAreRejected) {
  std::string why;
  EXPECT_FALSE(Glob::parse("gpu[0-3", &why));
  EXPECT_EQ(why, "unterminated '[' at offset 3");
  EXPECT_FALSE(Glob::parse("abc\\", &why));
  EXPECT_EQ(why, "trailing '\\' at offset 3");
  EXPECT_FALSE(Glob::parse("[z-a]", &why));
  EXPECT_FALSE(Glob::parse("", &why));
}

struct CgroupCase {
  const char* layout;
  std::string path;
  bool has_pod;
};

TEST(CgroupIdentity, ContainerAndPodFromEveryLayout) {
  const std::vector<CgroupCase> cases = {
      {"docker, cgroupfs, v1", "/docker/" + kId, false},
      {"docker, systemd, v2", "/system.slice/docker-" + kId + ".scope", false},
      {"podman rootless, v2",
       "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId +
           ".scope/container",
       false},
      {"k8s containerd, cgroupfs, v1", "/kubepods/burstable/pod" + kPod + "/" + kId, true},
      {"k8s containerd, systemd, v2",
       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kPodEscaped +
           ".slice/cri-containerd-" + kId + ".scope",
       true},
      {"k8s CRI-O, systemd, v2",
       "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kPodEscaped +
           ".slice/crio-" + kId + ".scope",
       true},
      {"k8s CRI-O, cgroupfs, v1", "/kubepods/besteffort/pod" + kPod + "/crio-" + kId, true},
      {"k8s docker, systemd, guaranteed QoS",
       "/kubepods.slice/kubepods-pod" + kPodEscaped + ".slice/docker-" + kId + ".scope", true},
      {"k8s containerd, cgroupfs, v2 guaranteed", "/kubepods/pod" + kPod + "/" + kId, true},
      {"podman rootful, systemd", "/machine.slice/libpod-" + kId + ".scope", false},
      {"podman rootful, systemd, in a pod",
       "/machine.slice/machine-libpod_pod_" + std::string(64, '9') + ".slice/libpod-" + kId +
           ".scope",
       false},
      {"podman, cgroupfs", "/libpod_parent/libpod-" + kId, false},
      {"podman, cgroupfs, in a pod", "/libpod_parent/" + std::string(64, '9') + "/libpod-" + kId,
       false},
      {"podman --cgroups=split (quadlet)", "/system.slice/web.service/libpod-payload-" + kId,
       false},
      {"nerdctl, systemd", "/system.slice/nerdctl-" + kId + ".scope", false},
      {"nerdctl rootless, systemd",
       "/user.slice/user-1000.slice/user@1000.service/user.slice/nerdctl-" + kId + ".scope", false},
      {"nerdctl or ctr, cgroupfs (containerd's /<namespace>/<id>)", "/default/" + kId, false},
  };
  for (const auto& c : cases) {
    auto id = cgroup_identity(c.path);
    EXPECT_EQ(id.container_id, kId) << c.layout;
    if (c.has_pod)
      EXPECT_EQ(id.pod_uid, kPod) << c.layout;
    else
      EXPECT_FALSE(id.pod_uid) << c.layout;
  }
  auto plain = cgroup_identity("/user.slice/user-1000.slice/session-3.scope");
  EXPECT_FALSE(plain.container_id);
  EXPECT_FALSE(plain.pod_uid);
  EXPECT_FALSE(plain.user_manager_uid);  // a login session, not the user's systemd
}

TEST(CgroupIdentity, TheUserManagerARootlessContainerRunsUnder) {
  EXPECT_EQ(cgroup_identity("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" +
                            kId + ".scope/container")
                .user_manager_uid,
            1000u);
  EXPECT_EQ(cgroup_identity("/user.slice/user-4242.slice/user@4242.service").user_manager_uid,
            4242u);
  EXPECT_EQ(cgroup_identity("/user.slice/user-0.slice/user@0.service/app.slice/x.service/"
                            "libpod-payload-" +
                            kId)
                .user_manager_uid,
            0u);
  for (const std::string& rootful : std::vector<std::string>{
           "/machine.slice/libpod-" + kId + ".scope", "/system.slice/nerdctl-" + kId + ".scope",
           "/system.slice/user@backup.service", "/user.slice/user@1000.services/x",
           "/user.slice/user@.service/x", "/x/notuser@1000.service"})
    EXPECT_FALSE(cgroup_identity(rootful).user_manager_uid) << rootful;
}

TEST(CgroupIdentity, ProcCgroupFileV1AndV2) {
  EXPECT_EQ(parse_cgroup_paths("0::/system.slice/vllm.service\n"),
            std::vector<std::string>{"/system.slice/vllm.service"});
  const std::string v1 = "12:memory:/kubepods/burstable/pod" + kPod + "/" + kId +
                         "\n11:cpu,cpuacct:/kubepods/burstable/pod" + kPod + "/" + kId +
                         "\n1:name=systemd:/kubepods/burstable/pod" + kPod + "/" + kId + "\n0::/\n";
  EXPECT_EQ(parse_cgroup_paths(v1),
            (std::vector<std::string>{"/kubepods/burstable/pod" + kPod + "/" + kId, "/"}));
}

TEST(Classifier, CommandLineGlob) {
  MatchRule m;
  m.cmdline = glob("*serve*");
  auto c = one_class(m);
  EXPECT_EQ(class_of(c, proc(1, {"vllm", "serve", "meta-llama/Llama-3-8B"})), "online");
  EXPECT_EQ(class_of(c, proc(1)), std::nullopt);
}

TEST(Classifier, ExecutableByPathOrName) {
  MatchRule by_path;
  by_path.exe = glob("/opt/conda/bin/python*");
  MatchRule by_name;
  by_name.exe = glob("tritonserver");
  auto p = proc(1);
  p.exe = "/opt/conda/bin/python3.10";
  EXPECT_EQ(class_of(one_class(by_path), p), "online");
  EXPECT_EQ(class_of(one_class(by_name), p), std::nullopt);
  p.exe = "/opt/tritonserver/bin/tritonserver";
  EXPECT_EQ(class_of(one_class(by_name), p), "online");
}

TEST(Classifier, UidAndUser) {
  MatchRule by_uid;
  by_uid.uid = 1000;
  MatchRule by_user;
  by_user.user = "inference";
  auto p = proc(1);
  EXPECT_EQ(class_of(one_class(by_uid), p), "online");
  EXPECT_EQ(class_of(one_class(by_user), p), std::nullopt);
  p.user = "inference";
  p.uid = 998;
  EXPECT_EQ(class_of(one_class(by_user), p), "online");
  EXPECT_EQ(class_of(one_class(by_uid), p), std::nullopt);
}

TEST(Classifier, CgroupGlobOnSlicesAndPods) {
  MatchRule slice;
  slice.cgroup = glob("/system.slice/inference-*.service");
  MatchRule pods;
  pods.cgroup = glob("/kubepods*burstable*");
  auto p = proc(1);
  p.cgroups = {"/system.slice/inference-llama.service"};
  EXPECT_EQ(class_of(one_class(slice), p), "online");
  EXPECT_EQ(class_of(one_class(pods), p), std::nullopt);
  p.cgroups = {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kPodEscaped +
               ".slice/cri-containerd-" + kId + ".scope"};
  EXPECT_EQ(class_of(one_class(pods), p), "online");
  // cgroup v1: any hierarchy's path may match.
  p.cgroups = {"/", "/kubepods/burstable/pod" + kPod + "/" + kId};
  EXPECT_EQ(class_of(one_class(pods), p), "online");
}

TEST(Classifier, ContainerByIdPrefixOrNameAndPodByUid) {
  MatchRule short_id;
  short_id.container = glob(kId.substr(0, 12));
  MatchRule too_short;
  too_short.container = glob(kId.substr(0, 6));
  MatchRule name;
  name.container = glob("vllm-server");
  MatchRule pod;
  pod.pod = glob(kPod);
  auto p = proc(1);
  p.cgroups = {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kPodEscaped +
               ".slice/crio-" + kId + ".scope"};
  EXPECT_EQ(class_of(one_class(short_id), p), "online");
  EXPECT_EQ(class_of(one_class(too_short), p), std::nullopt);
  EXPECT_EQ(class_of(one_class(pod), p), "online");
  EXPECT_EQ(class_of(one_class(name), p), std::nullopt);
  p.container_name = "vllm-server";
  EXPECT_EQ(class_of(one_class(name), p), "online");
}

TEST(Classifier, ContainerNameGlobAndPodByNamespaceAndName) {
  MatchRule names;
  names.container = glob("vllm-*");
  MatchRule pods;
  pods.pod = glob("inference/llama-*");
  MatchRule any_ns;
  any_ns.pod = glob("*/llama-*");
  auto p = proc(1);
  p.cgroups = {"/kubepods/burstable/pod" + kPod + "/" + kId};
  EXPECT_EQ(class_of(one_class(names), p), std::nullopt);  // names not resolved: no match
  EXPECT_EQ(class_of(one_class(pods), p), std::nullopt);
  p.container_name = "vllm-engine";
  p.pod_name = "llama-7b-5d9f";
  p.pod_namespace = "inference";
  EXPECT_EQ(class_of(one_class(names), p), "online");
  EXPECT_EQ(class_of(one_class(pods), p), "online");
  EXPECT_EQ(class_of(one_class(any_ns), p), "online");
  p.pod_namespace = "batch";
  EXPECT_EQ(class_of(one_class(pods), p), std::nullopt);  // same name, other namespace
  EXPECT_EQ(class_of(one_class(any_ns), p), "online");
  p.container_name = "trainer";
  EXPECT_EQ(class_of(one_class(names), p), std::nullopt);
  EXPECT_EQ(one_class(pods).rules()[0].match[0].describe(), "pod=inference/llama-*");
}

TEST(Classifier, EnvironmentVariableWithGlobValue) {
  MatchRule m;
  m.env = EnvCondition{"JOB_KIND", glob("inference-*")};
  auto p = proc(1);
  EXPECT_EQ(class_of(one_class(m), p), std::nullopt);
  p.environ["JOB_KIND"] = "inference-prod";
  EXPECT_EQ(class_of(one_class(m), p), "online");
  p.environ["JOB_KIND"] = "training";
  EXPECT_EQ(class_of(one_class(m), p), std::nullopt);
}

TEST(Classifier, AllConditionsOfOneTableMustHold) {
  MatchRule m;
  m.user = "alice";
  m.cmdline = glob("*serve*");
  EXPECT_EQ(class_of(one_class(m), proc(1)), std::nullopt);
  EXPECT_EQ(class_of(one_class(m), proc(1, {"serve"})), "online");
}

TEST(Classifier, BuiltInClassesNeedNoConfig) {
  auto on = proc(1);
  Classifier c(builtin_config(on.uid).classes);
  on.environ["GPREEMPT_CLASS"] = "online";
  auto off = proc(2);
  off.environ["GPREEMPT_CLASS"] = "offline";
  EXPECT_EQ(class_of(c, on), "online");
  EXPECT_EQ(class_of(c, off), "offline");
  EXPECT_EQ(class_of(c, proc(3)), std::nullopt);  // unmatched: left alone
  EXPECT_GT(c.classify(on, {})->priority, c.classify(off, {})->priority);
}

TEST(Classifier, ProcessTreesInheritTheNearestMatchingAncestor) {
  MatchRule torchrun;
  torchrun.cmdline = glob("*torchrun*");
  MatchRule serve;
  serve.cmdline = glob("*serve*");
  Classifier c({ClassRule{{"online", 10, {RequestSource::kHint}, std::nullopt}, {serve}},
                ClassRule{{"offline", 0, {RequestSource::kHint}, std::nullopt}, {torchrun}}});
  auto launcher =
      proc(100, {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node=8", "train.py"});
  auto rank = proc(101, {"/usr/bin/python3", "-u", "train.py", "--local-rank=3"});
  auto loader =
      proc(102, {"/usr/bin/python3", "-c", "from multiprocessing.spawn import spawn_main"});
  auto r = c.classify(loader, {rank, launcher});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->class_name, "offline");
  EXPECT_EQ(r->inherited_from, launcher.key);
  EXPECT_EQ(r->rule, "cmdline=*torchrun*");
  // A process that matches itself is not overridden by its ancestors.
  auto server = proc(103, {"vllm", "serve"});
  EXPECT_EQ(class_of(c, server, {launcher}), "online");
  // No ancestor matches: left alone.
  EXPECT_EQ(class_of(c, loader, {proc(1, {"/sbin/init"})}), std::nullopt);
}

TEST(Classifier, ExplicitPidWinsThenFileOrder) {
  MatchRule by_user;
  by_user.user = "alice";
  MatchRule by_pid;
  by_pid.pid = 4242;
  Classifier c({ClassRule{{"first", 5, {RequestSource::kHint}, std::nullopt}, {by_user}},
                ClassRule{{"second", 1, {RequestSource::kHint}, std::nullopt}, {by_user}},
                ClassRule{{"pinned", 0, {RequestSource::kHint}, std::nullopt}, {by_pid}}});
  EXPECT_EQ(class_of(c, proc(1)), "first");
  EXPECT_EQ(class_of(c, proc(4242)), "pinned");
}

TEST(Classifier, AnyOfSeveralMatchTables) {
  MatchRule a;
  a.cmdline = glob("*serve*");
  MatchRule b;
  b.user = "inference";
  Classifier c({ClassRule{{"online", 10, {RequestSource::kHint}, std::nullopt}, {a, b}}});
  auto p = proc(1);
  EXPECT_EQ(class_of(c, p), std::nullopt);
  p.user = "inference";
  EXPECT_EQ(c.classify(p, {})->rule, "user=inference");
}

}  // namespace
}  // namespace gpreempt::sched
