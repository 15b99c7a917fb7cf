#include <gtest/gtest.h>

#include "logs/json.h"
#include "logs/log_compare.h"

using namespace gpreempt::logs;

namespace {
const char* kA =
    ":3:r.cpp :1 : 1 us: [pid:10 tid:0x1] Created SWq=0x100 to map on HWq=0x7000 with size 16384 with priority 1, cooperative: 0\n"
    ":4:r.cpp :1 : 2 us: [pid:10 tid:0x1] SWq=0x100, HWq=0x7000, id=1, Dispatch Header = 0xb02\n"
    ":3:r.cpp :1 : 3 us: [pid:10 tid:0x1] ShaderName : gemm\n"
    ":3:r.cpp :1 : 1 us: [pid:11 tid:0x2] Created SWq=0x200 to map on HWq=0x9000 with size 4096 with priority 2, cooperative: 0\n";
const char* kB =
    ":3:r.cpp :1 : 1 us: [pid:20 tid:0x1] Created SWq=0x100 to map on HWq=0x7000 with size 16384 with priority 2, cooperative: 0\n"
    ":3:r.cpp :1 : 1 us: [pid:20 tid:0x1] Created SWq=0x300 to map on HWq=0x8000 with size 16384 with priority 0, cooperative: 0\n"
    ":3:r.cpp :1 : 3 us: [pid:20 tid:0x1] ShaderName : conv\n";
}  // namespace

TEST(LogCompare, QueuesKernelsAndPriorities) {
  auto a = analyze_log(kA), b = analyze_log(kB);
  auto c = compare(a, b);
  EXPECT_EQ(c.hw_queues_a, 2u);
  EXPECT_EQ(c.hw_queues_b, 2u);
  EXPECT_EQ(c.hwq_common, (std::vector<std::uint64_t>{0x7000}));
  EXPECT_EQ(c.hwq_only_a, (std::vector<std::uint64_t>{0x9000}));
  EXPECT_EQ(c.hwq_only_b, (std::vector<std::uint64_t>{0x8000}));
  EXPECT_EQ(c.dispatches_a, 1u);
  EXPECT_EQ(c.priorities_a, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.priorities_b, (std::vector<int>{2, 0}));
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[0].name, "conv");
  EXPECT_EQ(c.kernels[0].a, 0u);
  EXPECT_EQ(c.kernels[0].b, 1u);
  auto j = to_json(c);
  EXPECT_EQ(j["hw_queues"]["common"][0], "0x7000");
}

TEST(LogCompare, QueueConfigPerPid) {
  auto a = analyze_log(kA);
  auto all = queue_configs(a);
  ASSERT_EQ(all.size(), 2u);
  auto one = queue_configs(a, 10);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].pid.value(), 10);
  ASSERT_EQ(one[0].queues.size(), 1u);
  EXPECT_EQ(one[0].queues[0].hwq, 0x7000u);
  EXPECT_EQ(one[0].queues[0].rptr_address, 0x7080u);
  EXPECT_EQ(one[0].queues[0].ids, (std::vector<std::uint64_t>{1}));
  auto j = to_json(one[0]);
  EXPECT_EQ(j["pid"], 10);
  EXPECT_EQ(j["queues"][0]["rptr_address"], "0x7080");
  EXPECT_EQ(j["queues"][0]["priority"], 1);
}
