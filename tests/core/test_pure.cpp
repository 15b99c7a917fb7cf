// Parsers, conversions and the suspension ledger: text in, values out.
#include <gtest/gtest.h>

#include "common/error.h"
#include "gpreempt/kfd_abi.h"
#include "kfd/grace.h"
#include "kfd/proc_queues.h"
#include "kfd/topology.h"
#include "preempt/ledger.h"
#include "ptrace/proc_status.h"
#include "support/fixtures.h"

using namespace gpreempt;

TEST(CoreGrace, MicrosecondsToKernelUnits) {
  EXPECT_EQ(kfd::grace_units_from_us(100, 2100), 210u);  // 100 us * 2100 MHz = 210,000 clocks
  EXPECT_EQ(kfd::grace_units_from_us(1, 1500), 2u);      // 1,500 clocks rounds up to 2 units
  EXPECT_EQ(kfd::grace_units_from_us(0, 2100), 1u);      // never 0: the CP reads 0 as infinite
  EXPECT_EQ(kfd::grace_units_from_us(10, 0), kfd::KFD_USE_DEFAULT_GRACE_PERIOD);
  EXPECT_EQ(kfd::grace_units_from_us(UINT64_MAX / 2, 2100), kfd::KFD_USE_DEFAULT_GRACE_PERIOD - 1);
  EXPECT_DOUBLE_EQ(kfd::grace_units_to_us(210, 2100), 100.0);
}

TEST(CoreProcStatus, TracerPidAndTgid) {
  const char* text = "Name:\tpython3\nTgid:\t77\nPid:\t78\nPPid:\t1\nTracerPid:\t4321\n";
  EXPECT_EQ(ptrace::parse_tracer_pid(text), 4321);
  EXPECT_EQ(ptrace::parse_tgid(text), 77);
  EXPECT_EQ(ptrace::parse_tracer_pid("Name:\tx\n"), std::nullopt);
  EXPECT_EQ(ptrace::parse_tracer_pid("TracerPid:\tabc\n"), std::nullopt);
}

TEST(CoreProcStatus, OwnProcessIsReadableFromProc) {
  EXPECT_FALSE(ptrace::tracer_of(::getpid()).has_value() &&
               ptrace::tracer_of(::getpid())->pid == ::getpid());
  EXPECT_NE(ptrace::command_of(::getpid()), "?");
}

TEST(CoreTopology, PropertiesParseByKey) {
  auto p = kfd::parse_properties(
      "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\n"
      "max_engine_clk_fcompute 2100\ncapability 746586752\nhive_id 18446744073709551615\n");
  EXPECT_EQ(p.at("simd_count"), 1216u);
  EXPECT_EQ(p.at("gfx_target_version"), 90402u);
  EXPECT_EQ(p.at("hive_id"), 18446744073709551615ull);
  try {
    kfd::parse_properties("simd_count 4\nbroken\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  kfd::GpuNode g;
  g.gfx_target_version = 90402;
  EXPECT_EQ(g.gfx_name(), "gfx942");
  g.gfx_target_version = 90010;
  EXPECT_EQ(g.gfx_name(), "gfx90a");
  g.capability = 0x20008080;  // bit 15 (DebugTrapSupported) among others
  EXPECT_TRUE(g.debug_trap_supported());
}

TEST(CoreTopology, ReadsTheSyntheticExampleTree) {
  GPREEMPT_REQUIRE_SHARED();
  const auto root = gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd/topology";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << root << " absent";
  auto gpus = kfd::read_gpu_nodes(root.string());
  ASSERT_FALSE(gpus.empty());
  for (const auto& g : gpus) {
    EXPECT_NE(g.gpu_id, 0u);
    EXPECT_GT(g.simd_count, 0u);
  }
}

TEST(CoreProcQueues, SysfsNumbersAndTypes) {
  EXPECT_EQ(kfd::parse_sysfs_number("65536"), 65536u);
  EXPECT_EQ(kfd::parse_sysfs_number("3\n"), 3u);
  EXPECT_EQ(kfd::parse_sysfs_number(""), std::nullopt);
  EXPECT_EQ(kfd::parse_sysfs_number("-1"), std::nullopt);
  EXPECT_EQ(kfd::sysfs_queue_type_name(0), "compute");
  EXPECT_EQ(kfd::sysfs_queue_type_name(9), "type 9");
}

TEST(CoreProcQueues, ReadsTheSyntheticExampleTree) {
  GPREEMPT_REQUIRE_SHARED();
  const auto root = gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd/proc";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << root << " absent";
  bool any = false;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    int pid = std::stoi(e.path().filename().string());
    auto qs = kfd::read_process_queues(pid, root.string());
    for (const auto& q : qs) {
      EXPECT_GT(q.size, 0u);
      any = true;
    }
  }
  EXPECT_TRUE(any);
  try {
    kfd::read_process_queues(999999999, root.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ESRCH);
  }
}

TEST(CoreLedger, KeepsFirstSuspensionTime) {
  using namespace std::chrono;
  preempt::SuspensionLedger l;
  const preempt::Clock::time_point t0{};
  l.suspended(3, t0);
  l.suspended(1, t0 + milliseconds(50));
  l.suspended(3, t0 + milliseconds(90));  // already suspended: keeps t0
  EXPECT_EQ(l.ids(), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(l.older_than(t0 + milliseconds(100), milliseconds(60)), (std::vector<uint32_t>{3}));
  EXPECT_EQ(l.oldest(), t0);
  l.resumed(3);
  EXPECT_EQ(l.older_than(t0 + milliseconds(100), milliseconds(60)), std::vector<uint32_t>{});
  l.clear();
  EXPECT_TRUE(l.empty());
}

TEST(CoreProcStatus, ParentIsThePPidField) {
  EXPECT_EQ(ptrace::parse_ppid("Name:\tx\nPPid:\t42\nTracerPid:\t7\n"), 42);
  EXPECT_EQ(ptrace::parent_of(::getpid()), ::getppid());
}
