// Parsers, conversions and the suspension ledger: text in, values out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/hex.h"
#include "common/proc_status.h"
#include "discovery/proc_parse.h"
#include "discovery/process_discovery.h"
#include "discovery/topology.h"
#include "gpreempt/kfd_abi.h"
#include "kfd/grace.h"
#include "preempt/ledger.h"
#include "ptrace/proc_status.h"
#include "support/fixtures.h"

using namespace gpreempt;

TEST(CoreHex, OneFormatForEveryHexNumber) {
  EXPECT_EQ(hex(0), "0x0");
  EXPECT_EQ(hex(0xd2), "0xd2");
  EXPECT_EQ(hex(0x7f00deadbeefull), "0x7f00deadbeef");
  EXPECT_EQ(hex(UINT64_MAX), "0xffffffffffffffff");
}

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

// The one reader of status lines: a key matches whole, blanks after the colon are not the value,
// the last line needs no newline, and the first of two lines wins.
TEST(CoreProcStatus, FieldsAreMatchedByTheirWholeKey) {
  const char* text = "TgidX:\t5\nTgid:\t 77\nNSpid:\t9\t3\nCapEff:\t000001ffffffffff\nTgid:\t1\nEmpty:";
  EXPECT_EQ(proc_status_field(text, "Tgid"), "77");
  EXPECT_EQ(proc_status_field(text, "NSpid"), "9\t3");
  EXPECT_EQ(proc_status_field(text, "CapEff"), "000001ffffffffff");
  EXPECT_EQ(proc_status_field(text, "Empty"), "");
  EXPECT_EQ(proc_status_field(text, "Tgi"), std::nullopt);
  EXPECT_EQ(proc_status_field(text, "Pid"), std::nullopt);
  EXPECT_EQ(proc_status_field("", "Tgid"), std::nullopt);
  EXPECT_EQ(ptrace::parse_tgid(text), 77);
  EXPECT_EQ(discovery::parse_nspid(text), (std::vector<int>{9, 3}));
}

TEST(CoreProcStatus, OwnProcessIsReadableFromProc) {
  EXPECT_FALSE(ptrace::tracer_of(::getpid()).has_value() &&
               ptrace::tracer_of(::getpid())->pid == ::getpid());
  EXPECT_NE(ptrace::command_of(::getpid()), "?");
}

// Topology and per-process sysfs are read by lib/discovery (one parser each); these check what the
// core's callers (grace conversion, `gpreempt info`, the C ABI) rely on.
TEST(CoreTopology, GpuNodeFields) {
  discovery::GpuNode g;
  g.gfx_target_version = 90402;
  EXPECT_EQ(g.gfx_name(), "gfx942");
  g.gfx_target_version = 90010;
  EXPECT_EQ(g.gfx_name(), "gfx90a");
  g.capability = 0x20008080;  // bit 15 (DebugTrapSupported) among others
  EXPECT_TRUE(g.debug_trap_supported());
}

TEST(CoreTopology, MalformedPropertiesNameTheFileAndLine) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("gpreempt-topology-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "nodes/1");
  auto write = [](const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << text;
  };
  write(root / "nodes/1/gpu_id", "4660\n");
  write(root / "nodes/1/properties", "simd_count 4\nbroken\nmax_engine_clk_fcompute 2100\n");
  try {
    discovery::read_gpu_nodes(root.string());
    ADD_FAILURE() << "malformed properties accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EINVAL);
    EXPECT_NE(std::string(e.what()).find("nodes/1/properties:2:"), std::string::npos) << e.what();
  }
  write(root / "nodes/1/properties",
        "simd_count 4\ngfx_target_version 90402\nmax_engine_clk_fcompute 2100\n");
  auto gpus = discovery::read_gpu_nodes(root.string());
  std::filesystem::remove_all(root);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].gpu_id, 4660u);
  EXPECT_EQ(gpus[0].max_engine_clk_fcompute, 2100u);
  EXPECT_EQ(gpus[0].gfx_name(), "gfx942");
  EXPECT_TRUE(discovery::find_gpu(gpus, 4660).has_value());
  EXPECT_FALSE(discovery::find_gpu(gpus, 1).has_value());
}

TEST(CoreTopology, ReadsTheSyntheticExampleTree) {
  GPREEMPT_REQUIRE_SHARED();
  const auto root = gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd/topology";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << root << " absent";
  auto gpus = discovery::read_gpu_nodes(root.string());
  ASSERT_FALSE(gpus.empty());
  for (const auto& g : gpus) {
    EXPECT_NE(g.gpu_id, 0u);
    EXPECT_GT(g.simd_count, 0u);
  }
}

TEST(CoreProcQueues, SysfsNumbersAndTypes) {
  EXPECT_EQ(discovery::parse_sysfs_number("65536"), 65536u);
  EXPECT_EQ(discovery::parse_sysfs_number("3\n"), 3u);
  EXPECT_EQ(discovery::parse_sysfs_number(""), std::nullopt);
  EXPECT_EQ(discovery::parse_sysfs_number("-1"), std::nullopt);
  EXPECT_EQ(discovery::parse_sysfs_number("0x10"), std::nullopt);
  EXPECT_EQ(discovery::sysfs_queue_type_name(0), "compute");
  EXPECT_EQ(discovery::sysfs_queue_type_name(9), "type 9");
}

TEST(CoreProcQueues, ReadsTheSyntheticExampleTree) {
  GPREEMPT_REQUIRE_SHARED();
  discovery::SystemRoots roots;
  roots.kfd_sysfs = (gpreempt::testing::shared_dir() / "kfd/examples/sys_class_kfd_kfd").string();
  const auto proc = std::filesystem::path(roots.kfd_sysfs) / "proc";
  if (!std::filesystem::is_directory(proc)) GTEST_SKIP() << proc << " absent";
  bool any = false;
  for (const auto& e : std::filesystem::directory_iterator(proc)) {
    int pid = std::stoi(e.path().filename().string());
    auto qs = discovery::read_process_queues(pid, roots);
    for (const auto& q : qs) {
      EXPECT_GT(q.size, 0u);
      any = true;
    }
  }
  EXPECT_TRUE(any);
  try {
    discovery::read_process_queues(999999999, roots);
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
  // "Longer than": exactly the bound is not yet expired, one tick more is.
  EXPECT_EQ(l.older_than(t0 + milliseconds(110), milliseconds(60)), (std::vector<uint32_t>{3}));
  EXPECT_EQ(l.older_than(t0 + milliseconds(110), milliseconds(110)), std::vector<uint32_t>{});
  EXPECT_EQ(l.older_than(t0 + milliseconds(111), milliseconds(110)), (std::vector<uint32_t>{3}));
  EXPECT_EQ(l.older_than(t0 + milliseconds(111), milliseconds(55)), (std::vector<uint32_t>{1, 3}));
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
