// ROCm 4.x logs, as quoted in public issue trackers (tests/logs/fixtures/rocm4, each with its
// source beside it): ROCclr records carry "[<thread>]" without "tid:" or nothing at all, HIP API
// records "<pid>: [<thread>]" / "<pid> : [<thread>]", and kernel records separate their message
// with "!" and a TAB. Kernels, dispatches and HW queues come out as from ROCm 5-7 logs.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "logs/hip_log_analyzer.h"

using namespace gpreempt::logs;
namespace gt = gpreempt::testing;

namespace {
std::string fixture(const char* name) {
  const std::string text = gt::read_file(gt::source_dir() / "tests/logs/fixtures/rocm4" / name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}
const ProcessThreads* process(const LogSummary& s, std::optional<int> pid) {
  for (const auto& p : s.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}
}  // namespace

TEST(LogRocm4, KernelDispatchAndHwQueueFromTheRocm45Layout) {
  const auto s = analyze_log(fixture("spack27535_rocm450_launch_a.log"));
  EXPECT_EQ(s.lines, 10u);
  EXPECT_EQ(s.recognized, 10u);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels.begin()->first, "_Z10Amplify_2diiiiP15HIP_vector_typeIdLj2EES1_PdS2_");
  EXPECT_EQ(s.kernels.begin()->second, 1u);
  EXPECT_EQ(s.dispatches, 1u);
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].address, 0x7fb360aa6000u);
  EXPECT_EQ(s.hw_queues[0].dispatches, 1u);
  EXPECT_FALSE(s.hw_queues[0].pid);  // ROCclr's own records print no pid in 4.x
  // The API records' "120148: [7fb360ad23c0]": pid and thread; ROCclr's "[7fb360ad23c0]": thread
  // only.
  const ProcessThreads* api = process(s, 120148);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->tids, std::set<std::string>{"7fb360ad23c0"});
  const ProcessThreads* runtime = process(s, std::nullopt);
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(runtime->tids, std::set<std::string>{"7fb360ad23c0"});
  EXPECT_EQ(s.errors_total, 0u);  // ihipLaunchKernel / hipLaunchKernel returned hipSuccess
  EXPECT_EQ(s.levels.at(3), 7);
  EXPECT_EQ(s.levels.at(4), 3);
}

TEST(LogRocm4, SecondPassageAddsToTheSameQueue) {
  const auto s = analyze_log(fixture("spack27535_rocm450_launch_a.log") +
                             fixture("spack27535_rocm450_launch_b.log"));
  EXPECT_EQ(s.dispatches, 2u);
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].dispatches, 2u);
  EXPECT_EQ(s.errors_total, 0u);
}

TEST(LogRocm4, FailedCallsAndLevelOneRecordsOfRocm40) {
  const auto s = analyze_log(fixture("rocm1483_rocm4x_hostregister_oom.log"));
  EXPECT_EQ(s.lines, 12u);
  EXPECT_EQ(s.recognized,
            9u);  // two program-output lines and the "**"-prefixed paste are not records
  ASSERT_EQ(s.errors_total, 3u);
  EXPECT_EQ(s.errors[0].line, 10u);  // ":1:memory.cpp … Video memory allocation failed!"
  EXPECT_EQ(s.errors[1].line, 11u);
  EXPECT_EQ(s.errors[2].line, 12u);
  EXPECT_NE(s.errors[2].text.find("hipHostRegister: Returned hipErrorOutOfMemory"),
            std::string::npos);
  const ProcessThreads* p = process(s, 3463);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->tids, std::set<std::string>{"7fd907a1e880"});
}

TEST(LogRocm4, RecordsWithoutPidOrThreadOfRocm431) {
  const auto s = analyze_log(fixture("rocm1578_rocm431_gfx803_init.log"));
  EXPECT_EQ(s.lines, 14u);
  EXPECT_EQ(s.recognized, 10u);
  const ProcessThreads* p = process(s, 182280);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->tids, std::set<std::string>{"7f634262e880"});
  EXPECT_EQ(s.levels.at(4), 4);
  EXPECT_EQ(s.errors_total, 0u);
}

// The "!\t" separator in front of any message, with and without the thread bracket.
TEST(LogRocm4, BangTabSeparatorBeforeTheMessage) {
  const auto s = analyze_log(
      ":3:rocvirtual.cpp           :2677: 1 us: [7f01]!\tShaderName : k1\n"
      ":3:rocvirtual.cpp           :2677: 2 us: !\tShaderName : k2\n"
      ":4:rocvirtual.cpp           :843 : 3 us: [7f01]!\tHWq=0x1000, Dispatch Header = 0x302 "
      "(type=2)\n"
      ":3:hip_module.cpp           :495 : 4 us: 77: [7f01]!\tihipModuleLoadData: Returned "
      "hipErrorInvalidImage : \n"
      ":3:rocvirtual.cpp           :1 : 5 us: [7f01]!\t\n"
      ":3:rocvirtual.cpp           :1 : 6 us: [7f01]!x ShaderName : not_a_kernel\n");
  EXPECT_EQ(s.recognized, 6u);
  EXPECT_EQ(s.kernels, (std::map<std::string, std::uint64_t, std::less<>>{{"k1", 1}, {"k2", 1}}));
  EXPECT_EQ(s.dispatches, 1u);
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].address, 0x1000u);
  ASSERT_EQ(s.errors_total, 1u);
  EXPECT_EQ(s.errors[0].line, 4u);
}
