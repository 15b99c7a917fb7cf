#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <exception>
#include <system_error>

#include "discovery/json.h"
#include "discovery/proc_parse.h"
#include "discovery/process_discovery.h"
#include "discovery/process_watch.h"
#include "fixtures.h"

using namespace gpreempt::discovery;
namespace fs = std::filesystem;

TEST(ProcParse, NsPidCmdlineCgroup) {
  EXPECT_EQ(parse_nspid("Name:\tpython\nNSpid:\t3934101\t157868\nPPid:\t1\n"), (std::vector<int>{3934101, 157868}));
  EXPECT_EQ(parse_nspid("Name:\tx\n"), std::vector<int>{});
  EXPECT_EQ(parse_cmdline(std::string("python3\0-m\0vllm\0", 16)), (std::vector<std::string>{"python3", "-m", "vllm"}));
  EXPECT_EQ(parse_cmdline(std::string("a\0\0b", 4)), (std::vector<std::string>{"a", "", "b"}));
  const std::string id(64, 'a');
  EXPECT_EQ(container_id_from_cgroup("0::/system.slice/docker-" + id + ".scope\n").value(), id);
  EXPECT_EQ(container_id_from_cgroup("12:pids:/docker/" + id + "\n").value(), id);
  EXPECT_EQ(container_id_from_cgroup("0::/kubepods/besteffort/pod1234/cri-containerd-" + id + ".scope\n").value(), id);
  EXPECT_FALSE(container_id_from_cgroup("0::/user.slice/user-1000.slice/session-2.scope\n").has_value());
  // Only where a runtime made the cgroup: a look-alike a user made in its own delegated subtree
  // (or below a service's cgroup) is no container (docs/security.md).
  EXPECT_FALSE(container_id_from_cgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" +
                                        id + ".scope\n"));
  EXPECT_FALSE(container_id_from_cgroup("0::/system.slice/job.service/docker-" + id + ".scope\n"));
  EXPECT_EQ(sysfs_queue_type_name(0), "compute");
  EXPECT_EQ(sysfs_queue_type_name(3), "sdma_xgmi");
}

namespace {
struct FakeSystem {
  fs::path root;
  SystemRoots roots;
  FakeSystem() {
    root = fs::temp_directory_path() / ("gpreempt_fake_proc_" + std::to_string(::getpid()));
    fs::remove_all(root);
    roots.proc = (root / "proc").string();
    roots.kfd_sysfs = (root / "kfd").string();
    roots.kfd_device = "/dev/kfd";
    add(100, "100", "0::/user.slice\n", true);
    add(200, "200\t7", "0::/system.slice/docker-" + std::string(64, 'c') + ".scope\n", true);
    add(300, "300", "0::/\n", false);
    fs::create_directories(root / "kfd/proc/200/queues/0");
    fs::create_directories(root / "kfd/proc/200/queues/3");
    write(root / "kfd/proc/200/queues/0/type", "0");
    write(root / "kfd/proc/200/queues/0/gpuid", "63420");
    write(root / "kfd/proc/200/queues/0/size", "1048576");
    write(root / "kfd/proc/200/queues/3/type", "1");
    write(root / "kfd/proc/200/queues/3/gpuid", "63420");
    write(root / "kfd/proc/200/queues/3/size", "4096");
  }
  ~FakeSystem() { fs::remove_all(root); }
  static void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
  void add(int pid, const std::string& nspid, const std::string& cgroup, bool kfd) {
    fs::path d = root / "proc" / std::to_string(pid);
    fs::create_directories(d / "fd");
    write(d / "status", "Name:\tw\nNSpid:\t" + nspid + "\n");
    write(d / "cmdline", std::string("worker\0--id\0", 12) + std::to_string(pid) + std::string(1, '\0'));
    write(d / "cgroup", cgroup);
    fs::create_symlink("/dev/null", d / "fd/0");
    if (kfd) fs::create_symlink("/dev/kfd", d / "fd/5");
  }
};
}  // namespace

TEST(ProcessDiscovery, KfdUsersQueuesAndContainers) {
  FakeSystem sys;
  EXPECT_EQ(kfd_users(sys.roots), (std::vector<int>{100, 200}));
  EXPECT_EQ(kfd_sysfs_processes(sys.roots), (std::vector<int>{200}));
  auto q = sysfs_queues(sys.roots, 200);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].queue_id, 0u);
  EXPECT_EQ(q[0].gpu_id, 63420u);
  EXPECT_EQ(q[0].type, "compute");
  EXPECT_EQ(q[0].ring_size.value(), 1048576u);
  EXPECT_EQ(q[1].queue_id, 3u);
  EXPECT_EQ(q[1].type, "sdma");

  auto all = gpu_processes(sys.roots);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].pid, 200);
  EXPECT_EQ(all[1].container_pid.value(), 7);
  EXPECT_EQ(all[1].container_id.value(), std::string(64, 'c'));
  EXPECT_EQ(all[1].cmdline, (std::vector<std::string>{"worker", "--id", "200"}));
  EXPECT_TRUE(all[1].has_kfd_open);
  EXPECT_TRUE(all[1].has_kfd_sysfs);
  EXPECT_FALSE(all[0].container_pid.has_value());

  auto in_container = gpu_processes(sys.roots, std::string("cccccccccccc"));
  ASSERT_EQ(in_container.size(), 1u);
  EXPECT_EQ(in_container[0].pid, 200);

  EXPECT_EQ(host_pid_of(sys.roots, 7, "cccc").value(), 200);
  EXPECT_EQ(host_pid_of(sys.roots, 7, "").value(), 200);
  EXPECT_FALSE(host_pid_of(sys.roots, 7, "dddd").has_value());
  EXPECT_EQ(container_pid_of(sys.roots, 200).value(), 7);
  EXPECT_EQ(container_pid_of(sys.roots, 100).value(), 100);

  auto j = to_json(all[1]);
  EXPECT_EQ(j["container_pid"], 7);
  EXPECT_EQ(j["queues"][0]["gpu_id"], 0xf7bc);
}

TEST(ProcessDiscovery, MalformedSysfsQueueIsReportedNotGuessed) {
  FakeSystem sys;
  fs::create_directories(sys.root / "kfd/proc/200/queues/5");
  FakeSystem::write(sys.root / "kfd/proc/200/queues/5/type", "x");
  FakeSystem::write(sys.root / "kfd/proc/200/queues/5/gpuid", "1");
  std::vector<std::string> problems;
  auto q = sysfs_queues(sys.roots, 200, &problems);
  EXPECT_EQ(q.size(), 2u);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("queues/5"), std::string::npos);
}

// gpreemptd follows only the GPUs of a process's queues: one file per queue, not three (each sysfs
// read is a round trip to kfdsimd under the simulator). Queue 3 has no type or size file here,
// which sysfs_queues would report as unreadable.
TEST(ProcessDiscovery, SysfsQueueGpusReadsOnlyEachQueuesGpuid) {
  FakeSystem sys;
  fs::remove(sys.root / "kfd/proc/200/queues/3/type");
  fs::remove(sys.root / "kfd/proc/200/queues/3/size");
  FakeSystem::write(sys.root / "kfd/proc/200/queues/3/gpuid", "63421\n");
  fs::create_directories(sys.root / "kfd/proc/200/queues/5");
  FakeSystem::write(sys.root / "kfd/proc/200/queues/5/gpuid", "4294967296");  // beyond 32 bits
  fs::create_directories(sys.root / "kfd/proc/200/queues/6");                  // vanished: no files
  std::vector<std::string> problems;
  const auto q = sysfs_queue_gpus(sys.roots, 200, &problems);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].queue_id, 0u);
  EXPECT_EQ(q[0].gpu_id, 63420u);
  EXPECT_EQ(q[1].queue_id, 3u);
  EXPECT_EQ(q[1].gpu_id, 63421u);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("queues/5/gpuid"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("4294967296"), std::string::npos) << problems[0];
  EXPECT_TRUE(sysfs_queue_gpus(sys.roots, 100).empty()) << "no KFD directory: no queues";
}

// A reader out of descriptors learns nothing about the queues: it says so (gpreemptd then keeps
// the GPUs it knew) rather than answering "no queues", which would read as the queues gone.
TEST(ProcessDiscovery, OutOfDescriptorsIsAnErrorNotAnEmptyAnswer) {
  FakeSystem sys;
  rlimit normal{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &normal), 0);
  const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  const rlimit none_left{static_cast<rlim_t>(lowest_free), normal.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none_left), 0);
  // The answers are looked at once descriptors are back: an UBSan build checks a polymorphic
  // object's type (the exception, the error code's category) through a pipe.
  int queues_error = 0, listing_error = 0;
  std::exception_ptr thrown;
  (void)sysfs_queue_gpus(sys.roots, 200, nullptr, &queues_error);
  (void)kfd_sysfs_processes(sys.roots, &listing_error);
  try {
    (void)sysfs_queue_gpus(sys.roots, 200);
  } catch (...) {
    thrown = std::current_exception();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &normal), 0);
  EXPECT_EQ(queues_error, EMFILE);
  EXPECT_EQ(listing_error, EMFILE);
  int error = 0;
  try {
    if (thrown) std::rethrow_exception(thrown);
  } catch (const std::system_error& e) {
    error = e.code().value();
  }
  EXPECT_EQ(error, EMFILE) << "without an error out-parameter, the failure is thrown";
  EXPECT_EQ(sysfs_queue_gpus(sys.roots, 200, nullptr, &queues_error).size(), 2u)
      << "descriptors back: the queues again";
  EXPECT_EQ(queues_error, 0);
}

TEST(ProcessDiscovery, ExampleSysfsTree) {
  GPREEMPT_REQUIRE_SHARED();
  SystemRoots roots;
  roots.kfd_sysfs = (gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd").string();
  EXPECT_EQ(kfd_sysfs_processes(roots), (std::vector<int>{4242}));
  auto q = sysfs_queues(roots, 4242);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].gpu_id, 6699u);
  EXPECT_EQ(q[1].type, "sdma");
  const auto gpus = sysfs_queue_gpus(roots, 4242);
  ASSERT_EQ(gpus.size(), q.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    EXPECT_EQ(gpus[i].queue_id, q[i].queue_id);
    EXPECT_EQ(gpus[i].gpu_id, q[i].gpu_id);
  }
}

TEST(ProcessDiscovery, RealProcSelf) {
  SystemRoots roots;
  auto me = describe_process(roots, ::getpid());
  ASSERT_FALSE(me.nspid.empty());
  EXPECT_FALSE(me.cmdline.empty());
  EXPECT_FALSE(me.has_kfd_open);
  EXPECT_EQ(container_pid_of(roots, ::getpid()).value(), me.nspid.back());
}

// A process is alive while it runs: not a zombie or dead, not exiting (PF_EXITING, 0x4). The
// command name may hold spaces and parentheses: the fields follow its last ')'.
TEST(ProcParse, StatAliveAndStartTime) {
  const std::string running =
      "42 (a (b) c) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5678 0 0\n";
  EXPECT_TRUE(parse_stat_alive(running));
  EXPECT_EQ(parse_stat_start_time(running), 5678u);
  EXPECT_FALSE(
      parse_stat_alive("42 (x) Z 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5678 0 0\n"));
  EXPECT_FALSE(
      parse_stat_alive("42 (x) X 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5678 0 0\n"));
  EXPECT_FALSE(
      parse_stat_alive("42 (x) S 1 42 42 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 5678 0 0\n"))
      << "PF_EXITING";
  EXPECT_FALSE(parse_stat_alive("42 (x) S 1"));
  EXPECT_FALSE(parse_stat_alive("garbage"));
}

TEST(ProcessDiscovery, LiveStartTimeIsThisProcesssAndNoneForAGoneOne) {
  SystemRoots roots;
  const auto me = live_start_time(roots, ::getpid());
  ASSERT_TRUE(me);
  EXPECT_GT(*me, 0u);
  FakeSystem fake;  // no stat files: every pid is gone
  EXPECT_FALSE(live_start_time(fake.roots, 100));
}

TEST(ProcessWatch, DiffReportsStartsExitsAndQueueChanges) {
  auto proc = [](int pid, std::vector<std::uint32_t> qids) {
    ProcessInfo p;
    p.pid = pid;
    p.cmdline = {"w" + std::to_string(pid)};
    for (auto id : qids) p.queues.push_back({pid, id, 0xf7bc, "compute", {}, {}, {}, {}, "sysfs"});
    return p;
  };
  std::vector<ProcessInfo> a = {proc(1, {0, 1}), proc(2, {0})};
  std::vector<ProcessInfo> b = {proc(2, {0, 3}), proc(5, {0})};
  auto ev = diff_processes(a, b);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].kind, "process_exited");
  EXPECT_EQ(ev[0].pid, 1);
  EXPECT_EQ(ev[1].kind, "process_started");
  EXPECT_EQ(ev[1].pid, 5);
  EXPECT_EQ(ev[2].kind, "queue_created");
  EXPECT_EQ(ev[2].pid, 2);
  EXPECT_EQ(ev[2].queue_id.value(), 3u);
  EXPECT_EQ(ev[3].kind, "queue_created");
  EXPECT_EQ(ev[3].pid, 5);
  auto back = diff_processes(b, a);
  std::size_t destroyed = 0;
  for (const auto& e : back) destroyed += e.kind == "queue_destroyed";
  EXPECT_EQ(destroyed, 1u);  // pid 2's queue 3; pid 5's queue goes with its process
  EXPECT_TRUE(diff_processes(a, a).empty());
  auto j = to_json(ev[2]);
  EXPECT_EQ(j["event"], "queue_created");
  EXPECT_EQ(j["gpu_id"], 0xf7bc);
}
