// Attack: the files gpreemptd reads as root are written by the users it judges. A process's
// /proc files can be made huge (its environment, its command line); in a fake or bind-mounted
// tree a name can be a symlink to a file only root may read; a runtime's per-container file sits
// in a directory its runtime (or, rootless, its user) controls. Each is refused: bounded, never
// through a symlink, and a rootless look-alike never borrows a rootful container's name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "container_resolver.h"
#include "process_facts_reader.h"

namespace gpreemptd {
namespace {

namespace fs = std::filesystem;

const std::string kVictim = std::string(64, 'a');

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

class Untrusted : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpreempt-untrusted-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  // A /proc/PID of uid 1000 in a fixture /proc.
  fs::path process(int pid) {
    const fs::path dir = root_ / "proc" / std::to_string(pid);
    write(dir / "stat",
          std::to_string(pid) + " (job) S 1 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0 0\n");
    write(dir / "status", "Name:\tjob\nUid:\t1000\t1000\t1000\t1000\n");
    write(dir / "cgroup", "0::/user.slice/user-1000.slice/session-1.scope\n");
    return dir;
  }
  fs::path root_;
};

TEST_F(Untrusted, ASymlinkedProcFileIsNotFollowed) {
  const fs::path dir = process(4242);
  // A file the attacker may not read, and /proc names pointing at it.
  write(root_ / "secret", std::string("serve\0--token\0hunter2\0", 22));
  fs::create_symlink(root_ / "secret", dir / "cmdline");
  fs::create_symlink(root_ / "secret", dir / "environ");
  auto f = read_process_facts((root_ / "proc").string(), 4242);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->key.start_time_ticks, 777u);
  EXPECT_TRUE(f->cmdline.empty()) << "followed the symlink: " << f->cmdline[0];
  EXPECT_TRUE(f->environ.empty());
}

TEST_F(Untrusted, AnOversizedProcFileIsRefused) {
  const fs::path dir = process(4243);
  std::string env = "GPREEMPT_CLASS=online";
  env.push_back('\0');
  env += "PAD=" + std::string(2u << 20, 'x');
  env.push_back('\0');
  write(dir / "environ", env);
  write(dir / "cmdline", std::string("serve\0", 6) + std::string(2u << 20, 'y'));
  auto f = read_process_facts((root_ / "proc").string(), 4243);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->environ.empty()) << "a 2 MiB environment was read whole";
  EXPECT_TRUE(f->cmdline.empty());
  // An ordinary one still is.
  write(dir / "environ", std::string("GPREEMPT_CLASS=offline\0", 23));
  f = read_process_facts((root_ / "proc").string(), 4243);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->environ["GPREEMPT_CLASS"], "offline");
}

TEST_F(Untrusted, ASymlinkedOrOversizedRuntimeFileNamesNothing) {
  ContainerRoots roots;
  roots.docker = (root_ / "docker").string();
  roots.containerd = roots.crio = roots.podman = "";
  std::vector<std::string> warnings;
  const std::string symlinked = std::string(64, 'b'), huge = std::string(64, 'c');
  write(root_ / "elsewhere/config.v2.json", R"({"Name":"/vllm-server","Config":{"Labels":{}}})");
  fs::create_directories(root_ / "docker" / symlinked);
  fs::create_symlink(root_ / "elsewhere/config.v2.json",
                     root_ / "docker" / symlinked / "config.v2.json");
  write(root_ / "docker" / huge / "config.v2.json",
        R"({"Name":"/vllm-server","Pad":")" + std::string(2u << 20, 'x') + R"("})");
  ContainerResolver r(roots, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(r.lookup(symlinked), nullptr) << "followed a symlink in the runtime's directory";
  EXPECT_EQ(r.lookup(huge), nullptr) << "read a 2 MiB container file whole";
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("a symlink (not followed)"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("larger than"), std::string::npos) << warnings[1];
}

TEST_F(Untrusted, ARootlessLookAlikeDoesNotBorrowARootfulContainersName) {
  ContainerRoots roots;
  roots.docker = (root_ / "docker").string();
  roots.containerd = roots.crio = roots.podman = "";
  write(root_ / "docker" / kVictim / "config.v2.json",
        R"({"Name":"/vllm-server","Config":{"Labels":{"io.kubernetes.pod.name":"llama",
            "io.kubernetes.pod.namespace":"inference","io.kubernetes.container.name":"vllm"}}})");
  ContainerResolver r(roots);
  ASSERT_NE(r.lookup_cgroup("/system.slice/docker-" + kVictim + ".scope"), nullptr);
  // The same id in a scope uid 1000 made under its own systemd.
  EXPECT_EQ(r.lookup_cgroup("/user.slice/user-1000.slice/user@1000.service/app.slice/libpod-" +
                            kVictim + ".scope"),
            nullptr);
  EXPECT_EQ(r.lookup_cgroup("/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" +
                            kVictim + ".scope"),
            nullptr);
  // Rootless roots are opt-in.
  EXPECT_EQ(ContainerRoots{}.podman_rootless, "");
  EXPECT_EQ(ContainerRoots{}.containerd_rootless, "");
}

}  // namespace
}  // namespace gpreemptd
