// Pure pieces of the workloads and the runtime: latency summary, presets, the notify protocol
// (over a real FIFO and a real Unix socket), topology parsing.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/latency_summary.h"
#include "notifier.h"
#include "presets.h"
#include "topology.h"

namespace gpreempt::workloads {
namespace {

TEST(LatencyStats, SummarizesWithInterpolatedPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const auto s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.p50, 50.5);
  EXPECT_DOUBLE_EQ(s.p95, 95.05);
  EXPECT_DOUBLE_EQ(s.p99, 99.01);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_NEAR(s.std, 28.866, 1e-3);
  const auto j = to_json(s);
  for (const char* k : {"count", "mean", "std", "p50", "p95", "p99", "max"}) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(LatencyStats, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).count, 0u);
  const auto s = summarize({3.5});
  EXPECT_DOUBLE_EQ(s.p99, 3.5);
  EXPECT_DOUBLE_EQ(s.std, 0);
}

// The evaluation's rows (gpreempt-des) use the same definition as the summaries, unsorted input
// included; an empty sample has no percentile (NaN, a null in results.json).
TEST(LatencyStats, PercentileIsTheSummarysDefinition) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const auto s = summarize(v);
  EXPECT_DOUBLE_EQ(gpreempt::percentile(v, 50), s.p50);
  EXPECT_DOUBLE_EQ(gpreempt::percentile(v, 95), s.p95);
  EXPECT_DOUBLE_EQ(gpreempt::percentile(v, 99), s.p99);
  EXPECT_DOUBLE_EQ(gpreempt::percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(gpreempt::percentile(v, 100), 100);
  EXPECT_TRUE(std::isnan(gpreempt::percentile({}, 50)));
}

TEST(Presets, FollowTheUsersCases) {
  auto cnn = find_preset("cnn");
  ASSERT_TRUE(cnn);
  uint64_t largest = 0;
  for (const auto& k : cnn->online_request) largest = std::max(largest, work_items(k));
  EXPECT_EQ(largest, 262144u);
  auto tr = find_preset("transformer");
  ASSERT_TRUE(tr);
  for (const auto& k : tr->online_request) EXPECT_EQ(work_items(k), 512u) << k.name;
  auto toy = find_preset("toy-online");
  ASSERT_TRUE(toy);
  EXPECT_DOUBLE_EQ(toy->online_rate_hz, 2.0);  // one request every 500 ms
  EXPECT_FALSE(toy->poisson);
  EXPECT_EQ(work_items(toy->online_request.front()), 32u * 512);
  auto gemm = find_preset("gemm2048");
  ASSERT_TRUE(gemm);
  EXPECT_EQ(gemm->offline_iteration.size(), 1u);
  EXPECT_TRUE(find_preset("toy-offline"));
  EXPECT_FALSE(find_preset("resnet"));
  for (const auto& p : presets()) {
    EXPECT_FALSE(p.online_request.empty()) << p.name;
    EXPECT_FALSE(p.offline_iteration.empty()) << p.name;
    for (const auto& k : p.offline_iteration) EXPECT_LT(k.name.size(), 40u) << k.name;
  }
}

TEST(Notifier, LineFormat) {
  EXPECT_EQ(format_start(3, 42, 1000), "start 3 42 1000\n");
  EXPECT_EQ(format_end(3, 42, 5000, 4000), "end 3 42 5000 4000\n");
}

std::filesystem::path temp_path(const char* name) {
  return std::filesystem::temp_directory_path() /
         (std::string(name) + "-" + std::to_string(getpid()));
}

TEST(Notifier, DeliversLinesThroughAFifo) {
  const auto path = temp_path("notify-fifo");
  std::filesystem::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) got += line + "\n";
  });
  {
    auto n = open_notifier(path.string(), false);
    n->request_start(0, 10);
    n->request_end(0, 20, 10);
  }
  reader.join();
  std::filesystem::remove(path);
  EXPECT_EQ(got, format_start(0, getpid(), 10) + format_end(0, getpid(), 20, 10));
}

TEST(Notifier, WaitsForTheControllersAckOnASocket) {
  const auto path = temp_path("notify-sock");
  std::filesystem::remove(path);
  const int ls = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(ls, 1), 0);
  std::vector<std::string> seen;
  std::thread controller([&] {
    const int c = accept(ls, nullptr, nullptr);
    char buf[256];
    for (;;) {
      const ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      seen.emplace_back(buf, static_cast<std::size_t>(n));
      if (seen.back().rfind("start", 0) == 0) (void)!send(c, "k", 1, 0);
    }
    close(c);
  });
  {
    auto n = open_notifier(path.string(), true);
    n->request_start(7, 1);  // returns only after the controller's byte
    n->request_end(7, 2, 1);
  }
  controller.join();
  close(ls);
  std::filesystem::remove(path);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], format_start(7, getpid(), 1));
  EXPECT_EQ(seen[1], format_end(7, getpid(), 2, 1));
}

TEST(Notifier, RejectsPathsThatAreNeitherSocketNorFifo) {
  EXPECT_THROW(open_notifier("/nonexistent/notify", false), std::runtime_error);
  const auto path = temp_path("notify-file");
  std::ofstream(path) << "x";
  try {
    open_notifier(path.string(), false);
    ADD_FAILURE() << "a regular file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(Topology, ParsesPropertiesByKey) {
  const auto p = simrt::topology::parse_properties(
      "cpu_cores_count 0\nsimd_count 320\nbroken\nnum_xcc 4\ncwsr_size 12214272\nname x y\n");
  EXPECT_EQ(p.at("simd_count"), 320u);
  EXPECT_EQ(p.at("num_xcc"), 4u);
  EXPECT_EQ(p.at("cwsr_size"), 12214272u);
  EXPECT_FALSE(p.count("broken"));
  EXPECT_FALSE(p.count("name"));
}

}  // namespace
}  // namespace gpreempt::workloads
