// Where queue pointers live (real MI308X mqds capture) and the PointerReader against a real
// child process: one process_vm_readv, the /proc/PID/mem fallback, and the errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "common/error.h"
#include "discovery/gfx9_mqd_layout.h"
#include "discovery/mqds.h"
#include "discovery/queue_pointers.h"
#include "fixtures.h"

namespace gpreempt::discovery {
namespace {

namespace gt = gpreempt::testing;

TEST(QueuePointers, RealCaptureHoldsBothDispatchIdsOfOneAmdQueue) {
  GPREEMPT_REQUIRE_SHARED();
  const auto dump = decode_mqds(
      gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt"), "03");
  QueueMapInputs in;
  in.mqds = &dump;
  const QueueMap map = build_queue_map(in);
  std::size_t checked = 0;
  for (const auto& p : dump.processes) {
    std::vector<std::string> notes;
    for (const auto& q : queue_pointers(map, p.pid, &notes)) {
      // amd_queue_t: write_dispatch_id at +0x38, read_dispatch_id at +0x80 (FACTS §18).
      EXPECT_EQ(q.rptr_address - q.wptr_address,
                gfx9::kAmdQueueReadDispatchIdOffset - gfx9::kAmdQueueWriteDispatchIdOffset);
      EXPECT_EQ(q.rptr_address % 8, 0u);
      EXPECT_NE(q.ring_base, 0u);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(QueuePointers, OnlyComputeQueuesWithBothAddressesAreWatched) {
  QueueMap map;
  QueueMapRow compute;
  compute.pid = 7;
  compute.queue_id = 0;
  compute.type = "compute";
  compute.rptr_address = 0x1080;
  compute.wptr_address = 0x1038;
  QueueMapRow sdma = compute;
  sdma.queue_id = 1;
  sdma.type = "sdma";
  QueueMapRow sysfs_only = compute;
  sysfs_only.queue_id = 2;
  sysfs_only.rptr_address.reset();
  sysfs_only.wptr_address.reset();
  QueueMapRow other = compute;
  other.pid = 8;
  map.queues = {compute, sdma, sysfs_only, other};
  std::vector<std::string> notes;
  const auto qs = queue_pointers(map, 7, &notes);
  ASSERT_EQ(qs.size(), 1u);
  EXPECT_EQ(qs[0].queue_id, 0u);
  EXPECT_EQ(qs[0].rptr_address, 0x1080u);
  EXPECT_EQ(qs[0].wptr_address, 0x1038u);
  EXPECT_EQ(notes.size(), 2u) << "the SDMA queue and the queue without addresses are explained";
}

TEST(QueuePointers, UnreadableDebugfsNamesTheFile) {
  QueuePointerSources src;
  src.debugfs = "/nonexistent-debugfs";
  src.kfd_sysfs = "/nonexistent-sysfs";
  try {
    read_queue_pointers(1, src);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-debugfs/mqds"), std::string::npos)
        << e.what();
  }
}

// A child holding amd_queue_t-shaped blocks at addresses the parent knows (fork copies the
// address space), parked until killed.
struct Child {
  pid_t pid = -1;
  explicit Child(const std::vector<uint64_t*>& fill) {
    int ready[2];
    EXPECT_EQ(pipe(ready), 0);
    pid = fork();
    if (pid == 0) {
      uint64_t n = 0;
      for (uint64_t* block : fill) {
        block[gfx9::kAmdQueueWriteDispatchIdOffset / 8] = 1000 + n;
        block[gfx9::kAmdQueueReadDispatchIdOffset / 8] = 500 + n;
        ++n;
      }
      char c = 1;
      (void)!write(ready[1], &c, 1);
      for (;;) pause();
    }
    char c;
    EXPECT_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    close(ready[1]);
  }
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

std::vector<QueuePointers> pointers_of(int pid, const std::vector<uint64_t*>& blocks) {
  std::vector<QueuePointers> qs;
  for (uint64_t* b : blocks) {
    const auto base = reinterpret_cast<uint64_t>(b);
    qs.push_back({pid, 1, std::nullopt, false, 0, base + gfx9::kAmdQueueReadDispatchIdOffset,
                  base + gfx9::kAmdQueueWriteDispatchIdOffset});
  }
  return qs;
}

TEST(PointerReader, SamplesManyQueuesOfAnotherProcess) {
  // More queues than one process_vm_readv call takes (IOV_MAX / 2 = 512).
  std::vector<std::vector<uint64_t>> storage(600, std::vector<uint64_t>(32, 0));
  std::vector<uint64_t*> blocks;
  for (auto& s : storage) blocks.push_back(s.data());
  Child child(blocks);
  PointerReader r(child.pid, pointers_of(child.pid, blocks));
  const auto s = r.sample();
  ASSERT_EQ(s.size(), blocks.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].rptr, 500 + i) << i;
    EXPECT_EQ(s[i].wptr, 1000 + i) << i;
  }
  EXPECT_EQ(r.method(), PointerReader::Method::kProcessVmReadv);
  EXPECT_TRUE(r.method_note().empty());
  EXPECT_EQ(storage[3][gfx9::kAmdQueueWriteDispatchIdOffset / 8], 0u)
      << "the parent's copy is untouched";
}

TEST(PointerReader, FallsBackToProcMemOnlyWhenProcessVmReadvIsRefused) {
  std::vector<uint64_t> a(32), b(32);
  Child child({a.data(), b.data()});
  PointerReader r(child.pid, pointers_of(child.pid, {a.data(), b.data()}));
  r.simulate_process_vm_readv_refusal(EPERM);
  const auto s = r.sample();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].rptr, 501u);
  EXPECT_EQ(s[1].wptr, 1001u);
  EXPECT_EQ(r.method(), PointerReader::Method::kProcMem);
  EXPECT_NE(r.method_note().find("process_vm_readv refused"), std::string::npos) << r.method_note();
}

TEST(PointerReader, ErrorsNameThePidTheAddressAndTheErrno) {
  std::vector<uint64_t> a(32);
  auto child = std::make_unique<Child>(std::vector<uint64_t*>{a.data()});
  const int pid = child->pid;
  auto qs = pointers_of(pid, {a.data()});
  qs.push_back({pid, 1, std::nullopt, false, 0, 0x10, 0x18});  // unmapped page
  for (bool proc_mem : {false, true}) {
    PointerReader r(pid, qs);
    if (proc_mem) r.simulate_process_vm_readv_refusal(ENOSYS);
    try {
      r.sample();
      FAIL() << "expected EFAULT/EIO";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_TRUE(e.code() == EFAULT || e.code() == EIO) << m;
      EXPECT_NE(m.find("pid " + std::to_string(pid)), std::string::npos) << m;
      EXPECT_NE(m.find("0x10"), std::string::npos) << m;
    }
  }
  PointerReader r(pid, pointers_of(pid, {a.data()}));
  EXPECT_EQ(r.sample().size(), 1u);
  child.reset();  // killed and reaped
  try {
    r.sample();
    FAIL() << "expected ESRCH";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ESRCH) << e.what();
    EXPECT_NE(std::string(e.what()).find("process gone"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpreempt::discovery
