// torch_mode traces are replayed with their dependencies: queues in order of first submission,
// host waits where the host had synchronised, kernel run times as traced.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "eval/des/kernel_trace.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des {
namespace {

std::string write(const std::string& text) {
  char name[] = "/tmp/des_trace_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(DesTrace, DependenciesAndHostGapsComeFromSubmitAndEndTimes) {
  // Written in finish order; conv and relu launched asynchronously, fc on another queue after
  // the host waited for relu (submitted 80 us after relu ended).
  const std::string f = write(
      R"({"pid":1,"queue_id":3,"name":"conv","grid":[65536,1,1],"workgroup":[256,1,1],"flops":1,"bytes":1,"submit_us":100,"start_us":102,"end_us":400})" "\n"
      R"({"pid":1,"queue_id":3,"name":"relu","grid":[65536],"workgroup":[256],"flops":1,"bytes":1,"submit_us":101,"start_us":400,"end_us":420})" "\n"
      R"({"pid":1,"queue_id":5,"name":"fc","grid":[4096,1,1],"workgroup":[256,1,1],"flops":1,"bytes":1,"submit_us":500,"start_us":502,"end_us":600})" "\n");
  const auto p = load_kernel_trace(f, sim::gpu::mi308x_profile(), "online[0].trace");
  std::remove(f.c_str());
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.queues, 2u);
  EXPECT_EQ(p.steps[0].kernel.name, "conv");
  EXPECT_TRUE(p.steps[0].after.empty());
  EXPECT_TRUE(p.steps[1].after.empty());  // asynchronous: conv was still running
  EXPECT_EQ(p.steps[2].queue, 1u);
  ASSERT_EQ(p.steps[2].after.size(), 1u);
  EXPECT_EQ(p.steps[2].after[0], 1u);
  EXPECT_EQ(p.steps[2].host_delay_ns, 80'000);
  EXPECT_EQ(p.nominal_ns, 500'000);
}

TEST(DesTrace, MalformedLinesNameTheFileAndLine) {
  const std::string f = write("{\"queue_id\":0}\n");
  try {
    (void)load_kernel_trace(f, sim::gpu::mi308x_profile(), "offline[1].trace");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("offline[1].trace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(f + ":1"), std::string::npos) << e.what();
  }
  std::remove(f.c_str());
}

TEST(DesTrace, ALastLineCutByAKilledWriterIsNamedAsCut) {
  const std::string whole =
      R"({"pid":1,"queue_id":3,"name":"conv","grid":[64],"workgroup":[64],"submit_us":1,"start_us":2,"end_us":3})";
  for (const bool terminated : {false, true}) {
    // Cut mid-record: without its newline it is a killed writer's; with one, just not JSON.
    const std::string f = write(whole + "\n" + R"({"pid":1,"queue_id":3,"na)" + (terminated ? "\n" : ""));
    try {
      (void)load_kernel_trace(f, sim::gpu::mi308x_profile(), "online[0].trace");
      FAIL() << "accepted";
    } catch (const SpecError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(f + ":2"), std::string::npos) << what;
      EXPECT_EQ(what.find("the last line is cut") != std::string::npos, !terminated) << what;
      EXPECT_EQ(what.find("not JSON") != std::string::npos, terminated) << what;
    }
    std::remove(f.c_str());
  }
}

}  // namespace
}  // namespace gpreempt::eval::des
