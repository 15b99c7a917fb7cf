// Container names and pods from the runtimes' own files (gpreemptd/container_resolver.h), on
// fixture trees in a temporary directory laid out as Docker, containerd (CRI) and CRI-O lay them
// out on a node; then through the facts reader (a fixture /proc) to the classifier, as the daemon
// does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "container_resolver.h"
#include "process_facts_reader.h"
#include "sched/config.h"

namespace gpreemptd {
namespace {

namespace fs = std::filesystem;

const std::string kDocker = std::string(64, 'a');
const std::string kDockerK8s = std::string(64, 'b');
const std::string kContainerd = std::string(64, 'c');
const std::string kCrio = std::string(64, 'd');
const std::string kBroken = std::string(64, 'e');
const std::string kUnknown = std::string(64, 'f');
const std::string kPodUid = "0f1b5c64-8c1e-4c3c-9c5a-2b3a1e2f4d5c";

class Tree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpreemptd-containers-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    roots_.docker = (root_ / "var/lib/docker/containers").string();
    roots_.containerd = (root_ / "run/containerd/io.containerd.runtime.v2.task").string();
    roots_.crio = (root_ / "run/containers/storage/overlay-containers").string();
    write(roots_.docker + "/" + kDocker + "/config.v2.json",
          R"({"ID":")" + kDocker + R"(","Name":"/vllm-server","Config":{"Labels":{}}})");
    write(roots_.docker + "/" + kDockerK8s + "/config.v2.json",
          R"({"Name":"/k8s_trainer_job-0_batch_uid_0","Config":{"Labels":{
               "io.kubernetes.container.name":"trainer","io.kubernetes.pod.name":"job-0",
               "io.kubernetes.pod.namespace":"batch"}}})");
    // Docker's own containerd namespace has a bundle too, without names: Docker's file wins.
    write(roots_.containerd + "/moby/" + kDocker + "/config.json", R"({"ociVersion":"1.1.0"})");
    write(roots_.containerd + "/k8s.io/" + kContainerd + "/config.json",
          R"({"ociVersion":"1.1.0","annotations":{
               "io.kubernetes.cri.container-type":"container",
               "io.kubernetes.cri.container-name":"vllm",
               "io.kubernetes.cri.sandbox-name":"llama-7b-5d9f",
               "io.kubernetes.cri.sandbox-namespace":"inference"}})");
    write(roots_.crio + "/" + kCrio + "/userdata/config.json",
          R"({"annotations":{"io.kubernetes.container.name":"trainer",
               "io.kubernetes.pod.name":"train-0","io.kubernetes.pod.namespace":"batch",
               "io.kubernetes.cri-o.ContainerType":"container"}})");
    write(roots_.docker + "/" + kBroken + "/config.v2.json", "{\"Name\": \"/half");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
  }

  fs::path root_;
  ContainerRoots roots_;
};

TEST_F(Tree, EachRuntimesFileNamesItsContainer) {
  std::vector<std::string> warnings;
  ContainerResolver r(roots_, [&](const std::string& w) { warnings.push_back(w); });

  const ContainerInfo* d = r.lookup(kDocker);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->runtime, "docker");
  EXPECT_EQ(d->name, "vllm-server");  // Docker's leading '/' dropped
  EXPECT_EQ(d->pod_name, "");

  const ContainerInfo* dk = r.lookup(kDockerK8s);
  ASSERT_TRUE(dk);
  EXPECT_EQ(dk->name, "trainer");  // the pod spec's name, not k8s_trainer_job-0_...
  EXPECT_EQ(dk->pod_namespace + "/" + dk->pod_name, "batch/job-0");

  const ContainerInfo* c = r.lookup(kContainerd);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->runtime, "containerd");
  EXPECT_EQ(c->name, "vllm");
  EXPECT_EQ(c->pod_namespace + "/" + c->pod_name, "inference/llama-7b-5d9f");
  EXPECT_EQ(c->file, roots_.containerd + "/k8s.io/" + kContainerd + "/config.json");

  const ContainerInfo* o = r.lookup(kCrio);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->runtime, "cri-o");
  EXPECT_EQ(o->name, "trainer");
  EXPECT_EQ(o->pod_namespace + "/" + o->pod_name, "batch/train-0");

  EXPECT_EQ(r.lookup(kUnknown), nullptr);
  EXPECT_TRUE(warnings.empty()) << warnings[0];  // a container no runtime knows is no problem
}

TEST_F(Tree, AMalformedFileIsWarnedAboutOnceWithItsPath) {
  std::vector<std::string> warnings;
  ContainerResolver r(roots_, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(r.lookup(kBroken), nullptr);
  EXPECT_EQ(r.lookup(kBroken), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  const std::string file = roots_.docker + "/" + kBroken + "/config.v2.json";
  EXPECT_EQ(warnings[0].rfind(file + ": not JSON (", 0), 0u) << warnings[0];
}

TEST(ContainerFiles, ParseErrorsSayWhichFileAndWhat) {
  std::string e;
  EXPECT_FALSE(parse_docker_config(R"({"ID":"x"})", "c.json", &e));
  EXPECT_EQ(e, "c.json: no \"Name\" string (is this a Docker config.v2.json?)");
  EXPECT_FALSE(parse_docker_config("[1]", "c.json", &e));
  EXPECT_EQ(e, "c.json: expected a JSON object, found array");
  EXPECT_FALSE(parse_docker_config(
      R"({"Name":"/x","Config":{"Labels":{"io.kubernetes.pod.name":7}}})", "c.json", &e));
  EXPECT_EQ(e, "c.json: Config.Labels.\"io.kubernetes.pod.name\" must be a string, not number");
  EXPECT_FALSE(parse_containerd_bundle(R"({"annotations":[]})", "b.json", &e));
  EXPECT_EQ(e, "b.json: \"annotations\" must be an object, not array");
  EXPECT_FALSE(
      parse_crio_bundle(R"({"annotations":{"io.kubernetes.container.name":{}}})", "u.json", &e));
  EXPECT_EQ(e, "u.json: annotations.\"io.kubernetes.container.name\" must be a string, not object");
  // A bundle without annotations (not made by the kubelet) is valid and names nothing.
  auto plain = parse_crio_bundle(R"({"ociVersion":"1.0.2"})", "u.json", &e);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->name, "");
}

TEST_F(Tree, AnswersAreCachedPerContainerId) {
  ContainerResolver r(roots_);
  ASSERT_TRUE(r.lookup(kDocker));
  EXPECT_EQ(r.lookup(kUnknown), nullptr);
  EXPECT_EQ(r.cached(), 2u);
  // The files are read once per id: a change afterwards is not seen, found or not.
  write(roots_.docker + "/" + kDocker + "/config.v2.json", R"({"Name":"/renamed"})");
  write(roots_.docker + "/" + kUnknown + "/config.v2.json", R"({"Name":"/late"})");
  EXPECT_EQ(r.lookup(kDocker)->name, "vllm-server");
  EXPECT_EQ(r.lookup(kUnknown), nullptr);
  // A new resolver (a reload with other roots) reads afresh.
  ContainerResolver fresh(roots_);
  EXPECT_EQ(fresh.lookup(kDocker)->name, "renamed");
}

TEST_F(Tree, OnlyContainerIdsBecomePathsAndNamelessBundlesDoNotCount) {
  ContainerResolver r(roots_);
  EXPECT_EQ(r.lookup("../" + kDocker), nullptr);
  EXPECT_EQ(r.lookup(""), nullptr);
  EXPECT_EQ(r.cached(), 0u);
  ContainerRoots no_docker = roots_;
  no_docker.docker.clear();
  ContainerResolver without(no_docker);
  EXPECT_EQ(without.lookup(kDocker), nullptr);  // only the nameless moby bundle is left
  EXPECT_TRUE(without.lookup(kCrio));
}

// A fixture /proc/PID with what the facts reader reads.
void fake_process(const fs::path& proc, int pid, int ppid, const std::string& cmd,
                  const std::string& cgroup) {
  const fs::path dir = proc / std::to_string(pid);
  fs::create_directories(dir);
  std::ofstream(dir / "stat") << pid << " (" << cmd << ") S " << ppid
                              << " 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " << 1000 + pid
                              << " 0 0\n";
  std::ofstream(dir / "cmdline") << cmd << '\0';
  std::ofstream(dir / "cgroup") << "0::" << cgroup << "\n";
}

TEST_F(Tree, TheClassifierMatchesNamesAndPodsTheFactsReaderResolved) {
  const fs::path proc = root_ / "proc";
  const std::string escaped = [] {
    std::string s = kPodUid;
    for (char& ch : s)
      if (ch == '-') ch = '_';
    return s;
  }();
  fake_process(proc, 100, 1, "serve",
               "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + escaped +
                   ".slice/cri-containerd-" + kContainerd + ".scope");
  fake_process(proc, 200, 1, "train",
               "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + escaped +
                   ".slice/crio-" + kCrio + ".scope");
  fake_process(proc, 300, 1, "web", "/system.slice/docker-" + kDocker + ".scope");
  fake_process(proc, 301, 300, "worker", "/system.slice/docker-" + kDocker + ".scope");

  auto config = gpreempt::sched::load_config(R"(
[[class]]
name = "online"
priority = 10
match = [ { pod = "inference/llama-*" }, { container = "vllm-*" } ]

[[class]]
name = "offline"
priority = 0
match = { pod = "batch/*", container = "trainer" }
)",
                                             "c.toml");
  ASSERT_TRUE(config.config) << config.errors[0].to_string();
  gpreempt::sched::Classifier classifier(config.config->classes);
  ContainerResolver r(roots_);
  auto class_of = [&](int pid) -> std::string {
    auto f = read_process_facts(proc.string(), pid, &r);
    if (!f) return "gone";
    auto c = classifier.classify(*f, read_ancestors(proc.string(), *f, &r));
    return c ? c->class_name + " (" + c->rule + ")" : "none";
  };
  EXPECT_EQ(class_of(100), "online (pod=inference/llama-*)");
  EXPECT_EQ(class_of(200), "offline (container=trainer pod=batch/*)");
  EXPECT_EQ(class_of(300), "online (container=vllm-*)");
  EXPECT_EQ(class_of(301), "online (container=vllm-*)");
  EXPECT_EQ(r.cached(), 3u);  // one read per container, however many processes it has

  auto facts = read_process_facts(proc.string(), 100, &r);
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->container_name, "vllm");
  EXPECT_EQ(facts->pod_namespace, "inference");
  EXPECT_EQ(facts->pod_name, "llama-7b-5d9f");
  // Without a resolver (or with the roots not mounted) names stay unknown: no match by name.
  auto bare = read_process_facts(proc.string(), 100);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->container_name, "");
  EXPECT_FALSE(classifier.classify(*bare, {}));
}

}  // namespace
}  // namespace gpreemptd
