// Container names and pods from the runtimes' own files (gpreemptd/container_resolver.h), on
// fixture trees in a temporary directory laid out as Docker, containerd (CRI, nerdctl, ctr), CRI-O
// and Podman (rootful and rootless) lay them out on a node; then through the facts reader (a
// fixture /proc) to the classifier, as the daemon does.
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

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

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

// Podman, nerdctl and ctr, rootful and rootless, in a tree of their own (the files as
// containers/storage, Podman, nerdctl and containerd-rootless.sh write them).
class Engines : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kAlice = 1000;
  static constexpr std::uint32_t kBob = 1001;
  static constexpr std::uint32_t kNobody = 2000;  // a uid with no passwd entry
  const std::string kPodman = std::string(64, '1');
  const std::string kPodmanRm = std::string(64, '2');   // `podman run --rm`: volatile
  const std::string kPodmanVfs = std::string(64, '3');  // another storage driver
  const std::string kRootless = std::string(64, '4');
  const std::string kNerdctl = std::string(64, '5');
  const std::string kNerdctlRootless = std::string(64, '6');
  // Podman with transient_store = true keeps its bundles in the runroot crio_root points into.
  const std::string kTransient = std::string(64, '7');
  const std::string kSandbox = std::string(64, '8');  // a CRI pause container: no name

  void SetUp() override {
    char tmpl[] = "/tmp/gpreemptd-engines-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    roots_.docker = (root_ / "var/lib/docker/containers").string();
    roots_.containerd = (root_ / "run/containerd/io.containerd.runtime.v2.task").string();
    roots_.crio = (root_ / "run/containers/storage/overlay-containers").string();
    roots_.podman = (root_ / "var/lib/containers/storage").string();
    roots_.podman_rootless = (root_ / "home").string() + "/%u/.local/share/containers/storage";
    roots_.containerd_rootless =
        (root_ / "run/user").string() + "/%U/containerd/io.containerd.runtime.v2.task";

    // containers/storage: one list per driver, "names" first is the Podman name; CRI-O's
    // containers are listed too (k8s_... names), and the storage layer's metadata is a string.
    write(roots_.podman + "/overlay-containers/containers.json",
          R"([{"id":")" + std::string(64, '0') +
              R"(","names":["k8s_trainer_train-0_batch_uid_0"],"image":"i","layer":"l"},
                    {"id":")" +
              kPodman +
              R"(","names":["vllm-podman"],"image":"i","layer":"l",
                     "metadata":"{\"image-name\":\"quay.io/x:1\",\"name\":\"vllm-podman\"}",
                     "created":"2026-11-26T02:00:00Z","flags":{"MountLabel":""}}])");
    write(roots_.podman + "/overlay-containers/volatile-containers.json",
          R"([{"id":")" + kPodmanRm + R"(","names":["scratch"],"flags":{"Volatile":true}}])");
    write(roots_.podman + "/overlay-images/images.json", "[]");
    write(roots_.podman + "/vfs-containers/containers.json",
          R"([{"id":")" + kPodmanVfs + R"(","names":["on-vfs"]}])");
    write(roots_.crio + "/" + kTransient + "/userdata/config.json",
          R"({"ociVersion":"1.0.2","annotations":{"io.container.manager":"libpod"}})");
    write((root_ / "home/alice/.local/share/containers/storage/overlay-containers/"
                   "containers.json")
              .string(),
          R"([{"id":")" + kRootless + R"(","names":["notebook"]}])");
    write(roots_.podman + "/btrfs-containers/containers.json",
          R"([{"id":")" + kTransient + R"(","names":["transient"]}])");

    // nerdctl: its "nerdctl/" labels are the bundle's annotations.
    write(roots_.containerd + "/default/" + kNerdctl + "/config.json",
          R"({"ociVersion":"1.1.0","annotations":{"nerdctl/name":"trainer-1",
                    "nerdctl/namespace":"default","nerdctl/hostname":"5555"}})");
    write(roots_.containerd + "/default/mytask/config.json", R"({"ociVersion":"1.1.0"})");
    write(roots_.containerd + "/k8s.io/" + kSandbox + "/config.json",
          R"({"annotations":{"io.kubernetes.cri.container-type":"sandbox",
                    "io.kubernetes.cri.sandbox-name":"llama-7b-5d9f"}})");
    write((root_ / "run/user/1000/containerd/io.containerd.runtime.v2.task/default").string() +
              "/" + kNerdctlRootless + "/config.json",
          R"({"annotations":{"nerdctl/name":"rootless-job"}})");
  }
  void TearDown() override { fs::remove_all(root_); }

  ContainerResolver resolver(std::vector<std::string>* warnings = nullptr) {
    return ContainerResolver(
        roots_,
        [warnings](const std::string& w) {
          if (warnings) warnings->push_back(w);
        },
        [](std::uint32_t uid, std::string& name, std::string& home) {
          if (uid != kAlice && uid != kBob) return false;
          name = uid == kAlice ? "alice" : "bob";
          home = "/home/" + name;
          return true;
        });
  }
  static std::string user(std::uint32_t uid, const std::string& scope) {
    const std::string u = std::to_string(uid);
    return "/user.slice/user-" + u + ".slice/user@" + u + ".service/user.slice/" + scope;
  }
  static std::string name_of(const ContainerInfo* i) {
    return i ? i->runtime + ":" + i->name : "none";
  }

  fs::path root_;
  ContainerRoots roots_;
};

TEST_F(Engines, PodmanNamesComeFromContainersStorage) {
  std::vector<std::string> warnings;
  auto r = resolver(&warnings);
  // Every layout Podman makes for the same container (getOCICgroupPath).
  for (const std::string& path :
       {"/machine.slice/libpod-" + kPodman + ".scope",
        "/machine.slice/libpod-" + kPodman + ".scope/container",
        "/machine.slice/machine-libpod_pod_" + std::string(64, '9') + ".slice/libpod-" + kPodman +
            ".scope",
        "/libpod_parent/libpod-" + kPodman, "/system.slice/web.service/libpod-payload-" + kPodman})
    EXPECT_EQ(name_of(r.lookup_cgroup(path)), "podman:vllm-podman") << path;
  const ContainerInfo* p = r.lookup(kPodman);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->file, roots_.podman + "/overlay-containers/containers.json");
  EXPECT_EQ(p->pod_name, "");
  EXPECT_EQ(name_of(r.lookup(kPodmanRm)), "podman:scratch");  // volatile-containers.json
  EXPECT_EQ(name_of(r.lookup(kPodmanVfs)), "podman:on-vfs");  // any <driver>-containers
  // A bundle in CRI-O's root without Kubernetes' names does not hide the storage's name.
  EXPECT_EQ(name_of(r.lookup(kTransient)), "podman:transient");
  EXPECT_EQ(r.lookup(std::string(64, 'f')), nullptr);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
}

TEST_F(Engines, RootlessContainersAreLookedUpInTheirUsersRoots) {
  std::vector<std::string> warnings;
  auto r = resolver(&warnings);
  EXPECT_EQ(name_of(r.lookup_cgroup(user(kAlice, "libpod-" + kRootless + ".scope"))),
            "podman:notebook");
  EXPECT_EQ(name_of(r.lookup_cgroup(user(kAlice, "nerdctl-" + kNerdctlRootless + ".scope"))),
            "nerdctl:rootless-job");
  // The same ids outside that user's tree: the per-user roots are not looked at.
  EXPECT_EQ(r.lookup_cgroup("/machine.slice/libpod-" + kRootless + ".scope"), nullptr);
  EXPECT_EQ(r.lookup(kNerdctlRootless), nullptr);
  // Another user's tree is another root: alice's files do not name bob's containers.
  EXPECT_EQ(r.lookup_cgroup(user(kBob, "libpod-" + kRootless + ".scope")), nullptr);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  // A uid the passwd database does not know: %u cannot be expanded, said once per container.
  EXPECT_EQ(r.lookup_cgroup(user(kNobody, "libpod-" + kRootless + ".scope")), nullptr);
  EXPECT_EQ(r.lookup_cgroup(user(kNobody, "libpod-" + kRootless + ".scope/container")), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "podman_rootless_root \"" + roots_.podman_rootless +
                             "\": uid 2000 has no user name or home directory in the passwd "
                             "database gpreemptd sees");
  // A rootful container's id in a scope alice made under her own systemd is alice's claim, not
  // that container: it never borrows its name (docs/security.md). Without the templates (the
  // default) a rootless scope names nothing at all.
  EXPECT_EQ(r.lookup_cgroup(user(kAlice, "libpod-" + kPodman + ".scope")), nullptr);
  roots_.podman_rootless.clear();
  roots_.containerd_rootless.clear();
  auto rootful = resolver();
  EXPECT_EQ(rootful.lookup_cgroup(user(kAlice, "libpod-" + kRootless + ".scope")), nullptr);
  EXPECT_EQ(rootful.lookup_cgroup(user(kAlice, "libpod-" + kPodman + ".scope")), nullptr);
}

TEST_F(Engines, NerdctlAndCtrNamesFromTheTaskBundle) {
  std::vector<std::string> warnings;
  auto r = resolver(&warnings);
  // nerdctl's systemd scope and containerd's default cgroupfs path.
  EXPECT_EQ(name_of(r.lookup_cgroup("/system.slice/nerdctl-" + kNerdctl + ".scope")),
            "nerdctl:trainer-1");
  EXPECT_EQ(name_of(r.lookup_cgroup("/default/" + kNerdctl)), "nerdctl:trainer-1");
  // `ctr run IMAGE mytask`: no name but the id the user chose, which need not be hex.
  const ContainerInfo* ctr = r.lookup_cgroup("/default/mytask");
  ASSERT_TRUE(ctr);
  EXPECT_EQ(name_of(ctr), "containerd:mytask");
  EXPECT_EQ(ctr->file, roots_.containerd + "/default/mytask/config.json");
  // A CRI sandbox names nothing; a two-level systemd path is not a task; nothing else is a path.
  EXPECT_EQ(r.lookup_cgroup("/k8s.io/" + kSandbox), nullptr);
  EXPECT_EQ(r.lookup_cgroup("/system.slice/sshd.service"), nullptr);
  const std::size_t before = r.cached();
  for (const char* odd : {"/default/..", "/../default", "/default/.hidden", "default/mytask",
                          "/default/my task", "/default/mytask/sub", "/", ""})
    EXPECT_EQ(r.lookup_cgroup(odd), nullptr) << odd;
  EXPECT_EQ(r.cached(), before);  // refused before any file was looked for
  EXPECT_TRUE(warnings.empty()) << warnings[0];
}

TEST(ContainerFiles, StorageListErrorsSayWhichFileAndWhat) {
  const std::string id(64, 'a');
  std::string e;
  EXPECT_FALSE(parse_storage_containers("{}", "c.json", id, &e));
  EXPECT_EQ(e, "c.json: expected a JSON array of containers, found object");
  EXPECT_FALSE(parse_storage_containers("[1]", "c.json", id, &e));
  EXPECT_EQ(e, "c.json: [0] must be an object, not number");
  EXPECT_FALSE(parse_storage_containers(R"([{"names":["x"]}])", "c.json", id, &e));
  EXPECT_EQ(e, "c.json: [0] has no \"id\" string (is this containers/storage's containers.json?)");
  EXPECT_FALSE(
      parse_storage_containers(R"([{"id":")" + id + R"(","names":"x"}])", "c.json", id, &e));
  EXPECT_EQ(e, "c.json: [0].\"names\" must be an array of strings");
  EXPECT_FALSE(parse_storage_containers("[", "c.json", id, &e));
  EXPECT_EQ(e.rfind("c.json: not JSON (", 0), 0u) << e;
  // Not listed, or listed without a name: not found, and not an error.
  EXPECT_FALSE(parse_storage_containers(R"([{"id":"b"}])", "c.json", id, &e));
  EXPECT_EQ(e, "");
  EXPECT_FALSE(parse_storage_containers(R"([{"id":")" + id + R"("}])", "c.json", id, &e));
  EXPECT_EQ(e, "");
  EXPECT_FALSE(parse_storage_containers("[]", "c.json", id, &e));
  EXPECT_EQ(e, "");
  auto found =
      parse_storage_containers(R"([{"id":")" + id + R"(","names":["a","b"]}])", "c.json", id, &e);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->name, "a");
  EXPECT_FALSE(parse_containerd_bundle(R"({"annotations":{"nerdctl/name":3}})", "b.json", &e));
  EXPECT_EQ(e, "b.json: annotations.\"nerdctl/name\" must be a string, not number");
}

TEST_F(Engines, AMalformedContainersListIsWarnedAboutOncePerContainer) {
  write(roots_.podman + "/overlay-containers/containers.json", "[{\"id\":");
  std::vector<std::string> warnings;
  auto r = resolver(&warnings);
  EXPECT_EQ(r.lookup(kPodman), nullptr);
  EXPECT_EQ(r.lookup_cgroup("/machine.slice/libpod-" + kPodman + ".scope"), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind(roots_.podman + "/overlay-containers/containers.json: not JSON (", 0),
            0u)
      << warnings[0];
  // The volatile list next to it still answers for its own containers.
  EXPECT_EQ(name_of(r.lookup(kPodmanRm)), "podman:scratch");
}

TEST_F(Engines, TheClassifierMatchesPodmanNerdctlAndCtrContainersByName) {
  const fs::path proc = root_ / "proc";
  fake_process(proc, 100, 1, "serve", "/machine.slice/libpod-" + kPodman + ".scope");
  fake_process(proc, 101, 100, "worker", "/machine.slice/libpod-" + kPodman + ".scope");
  fake_process(proc, 200, 1, "train", "/system.slice/nerdctl-" + kNerdctl + ".scope");
  fake_process(proc, 300, 1, "train", "/default/mytask");
  fake_process(proc, 400, 1, "lab", user(kAlice, "libpod-" + kRootless + ".scope/container"));
  fake_process(proc, 500, 1, "other", "/system.slice/sshd.service");
  auto config = gpreempt::sched::load_config(R"(
[[class]]
name = "online"
priority = 10
match = [ { container = "vllm-*" }, { container = "notebook" } ]

[[class]]
name = "offline"
priority = 0
match = [ { container = "trainer-*" }, { container = "mytask" } ]
)",
                                             "c.toml");
  ASSERT_TRUE(config.config) << config.errors[0].to_string();
  gpreempt::sched::Classifier classifier(config.config->classes);
  auto r = resolver();
  auto class_of = [&](int pid) -> std::string {
    auto f = read_process_facts(proc.string(), pid, &r);
    if (!f) return "gone";
    auto c = classifier.classify(*f, read_ancestors(proc.string(), *f, &r));
    return c ? c->class_name + " (" + c->rule + ")" : "none";
  };
  EXPECT_EQ(class_of(100), "online (container=vllm-*)");
  EXPECT_EQ(class_of(101), "online (container=vllm-*)");
  EXPECT_EQ(class_of(200), "offline (container=trainer-*)");
  EXPECT_EQ(class_of(300), "offline (container=mytask)");
  EXPECT_EQ(class_of(400), "online (container=notebook)");
  EXPECT_EQ(class_of(500), "none");
}

}  // namespace
}  // namespace gpreemptd
