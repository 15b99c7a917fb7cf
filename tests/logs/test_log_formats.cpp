// One fixture per record format the HIP runtime has printed, plus the damage real pastes carry.
#include <gtest/gtest.h>

#include "logs/hip_log_analyzer.h"
#include "logs/json.h"

using namespace gpreempt::logs;

namespace {
const char* kRocm7 =
    ":3:rocdevice.cpp            :3048: 20159570897 us: [pid:459769 tid: 0x7f8edc1c4400] Created SWq=0x7f8edc1a8000 to map on HWq=0x7f8acd200000 with size 16384 with priority 2, cooperative: 0\n"
    ":4:rocvirtual.cpp           :1083: 20161701400 us: [pid:459769 tid: 0x7f8edc1c4400] SWq=0x7f8edc1a8000, HWq=0x7f8acd200000, id=1, Dispatch Header = 0xb02 (type=2, barrier=1, acquire=1, release=1), setup=3\n"
    ":4:rocvirtual.cpp           :1267: 20161701422 us: [pid:459769 tid: 0x7f8edc1c4401] SWq=0x7f8edc1a8000, HWq=0x7f8acd200000, id=1, BarrierAND Header = 0x1503 (type=3, barrier=1, acquire=2, release=2)\n"
    ":3:rocvirtual.cpp           :3351: 6306362974 us: [pid:459769 tid: 0x7f8edc1c4400] ShaderName : dummy_kernel(int*, int)\n";
}  // namespace

TEST(LogFormats, Rocm7PidTidWithSpace) {
  auto s = analyze_log(kRocm7);
  EXPECT_EQ(s.lines, 4u);
  EXPECT_EQ(s.recognized, 4u);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid.value(), 459769);
  EXPECT_EQ(s.processes[0].tids, (std::set<std::string>{"0x7f8edc1c4400", "0x7f8edc1c4401"}));
  ASSERT_EQ(s.hw_queues.size(), 1u);
  const auto& q = s.hw_queues[0];
  EXPECT_EQ(q.address, 0x7f8acd200000ull);
  EXPECT_EQ(q.size.value(), 16384u);
  EXPECT_EQ(q.priority.value(), 2);
  EXPECT_FALSE(q.cooperative.value());
  EXPECT_EQ(q.sw_queues, (std::set<std::uint64_t>{0x7f8edc1a8000ull}));
  EXPECT_EQ(q.dispatches, 1u);
  EXPECT_EQ(q.barriers, 1u);
  EXPECT_EQ(q.ids, (std::set<std::uint64_t>{1}));
  EXPECT_EQ(s.dispatches, 1u);
  EXPECT_EQ(s.barriers, 1u);
  EXPECT_EQ(s.kernels.at("dummy_kernel(int*, int)"), 1u);
  auto j = to_json(s);
  EXPECT_EQ(j["hw_queues"][0]["hwq"], "0x7f8acd200000");
  EXPECT_EQ(j["hw_queues"][0]["sw_queues"][0], "0x7f8edc1a8000");
  EXPECT_EQ(j["processes"][0]["pid"], 459769);
  EXPECT_EQ(j["kernels"]["dummy_kernel(int*, int)"], 1);
  for (const char* k : {"lines", "recognized", "processes", "hw_queues", "dispatches", "barriers", "kernels", "errors"})
    EXPECT_TRUE(j.contains(k)) << k;
}

TEST(LogFormats, Rocm6PidTidWithoutSpaceAndOldCreatedLine) {
  auto s = analyze_log(
      ":3:rocdevice.cpp            :3013: 301282375932 us: [pid:145680 tid:0x7fffed309180] created hardware queue 0x7fffed28e000 with size 16384 with priority 1, cooperative: 1\n"
      ":3:rocdevice.cpp            :3105: 301282375951 us: [pid:145680 tid:0x7fffed309180] acquireQueue refCount: 0x7fffed28e000 (1)\n");
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].address, 0x7fffed28e000ull);
  EXPECT_EQ(s.hw_queues[0].priority.value(), 1);
  EXPECT_TRUE(s.hw_queues[0].cooperative.value());
  EXPECT_EQ(s.hw_queues[0].acquired, 1u);
  EXPECT_EQ(*s.processes[0].tids.begin(), "0x7fffed309180");
}

TEST(LogFormats, Rocm5PidColonBracketTidAndOldDispatchLine) {
  auto s = analyze_log(
      ":4:rocvirtual.cpp           :891 : 117659918644 us: 8088 : [tid:0x14b2015e9700] HWq=0x14b30ee00000, Dispatch Header = 0xb02 (type=2, barrier=1, acquire=1, release=1), setup=3\n");
  EXPECT_EQ(s.recognized, 1u);
  EXPECT_EQ(s.processes[0].pid.value(), 8088);
  ASSERT_EQ(s.hw_queues.size(), 1u);
  EXPECT_EQ(s.hw_queues[0].pid.value(), 8088);
  EXPECT_EQ(s.hw_queues[0].dispatches, 1u);
}

TEST(LogFormats, BareTidBracketNoPidAndNoWhoAtAll) {
  auto s = analyze_log(
      ":3:hip_module.cpp           :662 : 117659918626 us: [0x14b2015e9700] hipLaunchKernel ( 0x1 )\n"
      ":3:rocdevice.cpp            :415 : 578897276813 us:  Initalizing runtime stack, Enumerated GPU agents = 1\n");
  EXPECT_EQ(s.recognized, 2u);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_FALSE(s.processes[0].pid.has_value());
  EXPECT_EQ(s.processes[0].tids, (std::set<std::string>{"0x14b2015e9700"}));
}

TEST(LogFormats, TimestampVariants) {
  auto s = analyze_log(
      ":3:rocdevice.cpp            :415 : 0578897276813d us: [pid:1 tid:0x1] ShaderName : a\n"
      ":3:rocdevice.cpp            :415 : 0578897276813: [pid:1 tid:0x1] ShaderName : b\n"
      ":3:rocdevice.cpp            :415 : 578897276813 us: [pid:1 tid:0x1] ShaderName : c\n");
  EXPECT_EQ(s.recognized, 3u);
  EXPECT_EQ(s.kernels.size(), 3u);
}

TEST(LogFormats, AnsiColourCodesAreStripped) {
  auto s = analyze_log(
      ":3:hip_memory.cpp           :770 : 20159700677 us: [pid:459769 tid: 0x7f8edc1c4400] \x1b[32m hipMalloc ( 0x7fffea224ea0, 4096 ) \x1b[0m\n"
      ":3:hip_memory.cpp           :772 : 20159700715 us: [pid:459769 tid: 0x7f8edc1c4400] \x1b[31mhipMalloc: Returned hipErrorOutOfMemory : \x1b[0m\n");
  EXPECT_EQ(s.recognized, 2u);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].line, 2u);
  EXPECT_NE(s.errors[0].text.find("hipErrorOutOfMemory"), std::string::npos);
  EXPECT_EQ(s.errors[0].text.find('\x1b'), std::string::npos);
}

TEST(LogFormats, ErrorsLevelOneFailedCallsAndGpuFaults) {
  auto s = analyze_log(
      ":3:hip_memory.cpp           :772 : 1 us: [pid:7 tid:0x1] hipMalloc: Returned hipSuccess : 0x1\n"
      ":1:rocdevice.cpp            :3339: 2 us: [pid:7 tid:0x1] Unknown Event Type\n"
      ":3:hip_stream.cpp           :404 : 3 us: [pid:7 tid:0x1] hipStreamSynchronize: Returned hipErrorIllegalAddress : \n"
      "Memory access fault by GPU node-2 (Agent handle: 0x1) on address 0x7f. Reason: Page not present or supervisor privilege.\n"
      ":0:rocdevice.cpp            :3594: 4 us: [pid:7 tid:0x1] Callback: Queue 0x7f745c100000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION\n"
      "some program output\n");
  ASSERT_EQ(s.errors.size(), 4u);
  EXPECT_EQ(s.errors[0].line, 2u);
  EXPECT_EQ(s.errors[1].line, 3u);
  EXPECT_EQ(s.errors[2].line, 4u);
  EXPECT_EQ(s.errors[3].line, 5u);
  EXPECT_EQ(s.lines, 6u);
  EXPECT_EQ(s.recognized, 5u);  // program output is counted as a line, not recognized
  auto j = to_json(s);
  EXPECT_EQ(j["errors"][1]["line"], 3);
}

// "<function>: Returned <code>" reports a failure whoever the function is: the runtime's own
// (ihip*, __hip*, module loading, init) as much as a hip* API call. The lines are the real ones of
// realdata/amdlog and tests/logs/fixtures/rocm4 with a failing code.
TEST(LogFormats, FailedReturnOfAnyFunctionIsAnError) {
  auto s = analyze_log(
      ":3:hip_platform.cpp         :667 : 266505876843 us: 120148: [7fb360ad23c0] ihipLaunchKernel: Returned hipErrorInvalidConfiguration : \n"
      ":3:hip_platform.cpp         :259 : 578897280667 us:  __hipPushCallConfiguration: Returned hipErrorInvalidValue :\n"
      ":3:hip_module.cpp           :83  : 20159561912 us: [pid:459769 tid: 0x7f8edc1c4400] ihipModuleLoadData: Returned hipErrorInvalidImage : \n"
      ":3:hip_context.cpp          :145 : 3326436947 us: [pid:2539  tid:0x7ffff7e53740] PlatformState_init: Returned hipErrorNotInitialized : \n"
      ":3:hip_platform.cpp         :667 : 266505876843 us: 120148: [7fb360ad23c0] ihipLaunchKernel: Returned hipSuccess : \n"
      ":3:hip_platform.cpp         :259 : 578897280667 us:  __hipPushCallConfiguration: Returned hipSuccess :\n"
      ":3:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] ihipModuleLoadData ( 0x1, \"x: Returned hipErrorInvalidImage\" )\n"
      ":3:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] Arg0 = x: Returned hipErrorInvalidImage\n"
      ":3:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] a.b: Returned hipErrorInvalidImage\n"
      ":3:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] 9abc: Returned hipErrorInvalidImage\n");
  EXPECT_EQ(s.recognized, 10u);
  ASSERT_EQ(s.errors_total, 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(s.errors[i].line, i + 1);
  EXPECT_NE(s.errors[0].text.find("ihipLaunchKernel: Returned hipErrorInvalidConfiguration"), std::string::npos);
}

// A level-1 record is an error by its level; its being a failed return does not count it twice,
// whatever path the line takes (plain, coloured, glued after another record).
TEST(LogFormats, LevelOneFailedReturnCountedOnce) {
  for (const std::string line :
       {":1:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] hipModuleLoad: Returned hipErrorFileNotFound : \n",
        ":1:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] ihipModuleLoad: Returned hipErrorFileNotFound : \n",
        ":1:hip_module.cpp           :83  : 1 us: [pid:1 tid:0x1] \x1b[31mhipModuleLoad: Returned hipErrorFileNotFound : \x1b[0m\n",
        ":3:a.cpp :1 : 1 us: [pid:1 tid:0x1] hipInit ( ) :1:hip_module.cpp :83 : 1 us: [pid:1 tid:0x1] hipModuleLoad: "
        "Returned hipErrorFileNotFound : \n"}) {
    auto s = analyze_log(line);
    EXPECT_EQ(s.errors_total, 1u) << line;
    EXPECT_EQ(s.errors.size(), 1u) << line;
    EXPECT_EQ(s.levels.at(1), 1) << line;
  }
}

TEST(LogFormats, ErrorListIsCappedButCounted) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += ":1:x.cpp :1 : 1 us: boom\n";
  AnalyzerOptions o;
  o.max_errors = 10;
  auto s = analyze_log(text, o);
  EXPECT_EQ(s.errors.size(), 10u);
  EXPECT_EQ(s.errors_total, 50u);
}

TEST(LogFormats, PidFilterKeepsOneProcess) {
  AnalyzerOptions o;
  o.pid = 2;
  auto s = analyze_log(
      ":3:a.cpp :1 : 1 us: [pid:1 tid:0x1] ShaderName : k1\n"
      ":3:a.cpp :1 : 1 us: [pid:2 tid:0x2] ShaderName : k2\n",
      o);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid.value(), 2);
  EXPECT_EQ(s.kernels.count("k1"), 0u);
  EXPECT_EQ(s.kernels.at("k2"), 1u);
}

TEST(LogFormats, TerminalWrappedPasteGluedAndHardWrapped) {
  // Three records glued on one 3x80-column line, then a record hard-wrapped at column 80.
  auto pad = [](std::string s, std::size_t w) {
    s.resize(((s.size() + w - 1) / w) * w, ' ');
    return s;
  };
  const std::string a = ":3:hip_module.cpp :662 : 1 us: 8088 : [tid:0x1]  hipLaunchKernel ( 0x1 )";
  const std::string b = ":4:command.cpp :349 : 2 us: 8088 : [tid:0x1] Command (KernelExecution) enqueued";
  const std::string c = ":3:rocvirtual.cpp :786 : 3 us: 8088 : [tid:0x1] Arg0:   = val:16";
  std::string line1 = pad(a, 80) + pad(b, 80) + pad(c, 80);
  const std::string longrec =
      ":3:rocvirtual.cpp :2853: 4 us: 8088 : [tid:0x1] ShaderName : _ZN2at6native6legacy18elementwise_kernelILi512ELi1E";
  std::string row1 = longrec.substr(0, 80), row2 = pad(longrec.substr(80), 80);
  auto s = analyze_log(line1 + "\n" + row1 + "\n" + row2 + "\n");
  EXPECT_EQ(s.lines, 3u);
  EXPECT_EQ(s.records, 4u);
  EXPECT_EQ(s.recognized, 4u);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels.begin()->first, "_ZN2at6native6legacy18elementwise_kernelILi512ELi1E");
}

TEST(LogFormats, ShortProgramOutputIsNotGluedOntoAKernelName) {
  auto s = analyze_log(
      ":3:rocvirtual.cpp           :3351: 6306362974 us:  ShaderName : dummy_kernel(int*, int)\n"
      "Result OK\n");
  EXPECT_EQ(s.kernels.at("dummy_kernel(int*, int)"), 1u);
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(s.recognized, 1u);
}

TEST(LogFormats, AnyChunkingGivesTheSameSummary) {
  const std::string text = std::string(kRocm7) + "Memory access fault by GPU node-1\n" + kRocm7 + "tail without newline";
  const auto whole = to_json(analyze_log(text));
  for (std::size_t chunk : {1u, 2u, 7u, 64u, 1000u}) {
    LogAnalyzer a;
    for (std::size_t i = 0; i < text.size(); i += chunk) a.feed(std::string(text.substr(i, chunk)));
    EXPECT_EQ(to_json(a.finish()), whole) << "chunk " << chunk;
  }
  EXPECT_EQ(whole["lines"], 10);
}

TEST(LogFormats, OversizedRecordIsCutAndFlagged) {
  AnalyzerOptions o;
  o.max_record_bytes = 100;
  auto s = analyze_log(":3:a.cpp :1 : 1 us: ShaderName : " + std::string(500, 'k') + "\n", o);
  EXPECT_TRUE(s.truncated_record);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_LT(s.kernels.begin()->first.size(), 100u);
}

TEST(LogFormats, ManyGluedRecordsOnOneLine) {
  std::string line;
  for (int i = 0; i < 15000; ++i) line += ":3:a.cpp :1 : 1 us: [pid:1 tid:0x1] ShaderName : k   ";
  auto s = analyze_log(line + "\n");
  EXPECT_EQ(s.records, 15000u);  // under the 1 MiB record cap
  EXPECT_FALSE(s.truncated_record);
  EXPECT_EQ(s.kernels.at("k"), 15000u);
}

// A printed pid of -1 (or -2) is a pid like any other, not "no pid" (found by fuzz_log_analyzer:
// the one-pass analysis folded it into the pid-less process, the piece merge did not).
TEST(LogFormats, ANegativePidIsNotTheMissingPid) {
  auto s = analyze_log(
      ":3:hip_module.cpp           :662 : 117659918626 us: [0x14b2015e9700] hipLaunchKernel ( 0x1 )\n"
      ":3:hip_module.cpp           :662 : 117659918627 us: [pid:-1 tid:0x1] hipLaunchKernel ( 0x1 )\n"
      ":3:hip_module.cpp           :662 : 117659918628 us: [pid:-2 tid:0x2] hipLaunchKernel ( 0x1 )\n");
  ASSERT_EQ(s.processes.size(), 3u) << to_json(s).dump();
  EXPECT_FALSE(s.processes[0].pid.has_value());
  EXPECT_EQ(s.processes[1].pid, -1);
  EXPECT_EQ(s.processes[1].tids, (std::set<std::string>{"0x1"}));
  EXPECT_EQ(s.processes[2].pid, -2);
}
