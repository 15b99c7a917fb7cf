// `gpreempt top`'s view and frame from fixed status documents: what an operator reads must follow
// from the daemon's numbers (rates between two fetches, progress, latency, classes, processes).
#include <gtest/gtest.h>

#include <string>

#include "top_view.h"

namespace gpreempt::cli {
namespace {

using Json = nlohmann::ordered_json;

// A status document as gpreemptd produces it (docs/protocol.md), with the counters given.
Json status(double uptime_s, int suspensions, double suspended_s, int requests = 1520) {
  return Json::parse(R"({
    "schema_version": 2,
    "daemon": {"pid": 812, "version": "0.1.0", "config_path": "/etc/gpreempt/gpreemptd.toml",
               "socket_path": "/run/gpreempt/gpreemptd.sock", "uptime_s": )" + std::to_string(uptime_s) + R"(},
    "classes": [{"name": "offline", "priority": 0, "triggers": []},
                {"name": "online", "priority": 10, "triggers": ["transparent"]},
                {"name": "batch", "priority": 5, "triggers": []}],
    "gpus": [{"gpu_id": 63420, "can_suspend": true, "reason": null, "suspended_now": 2,
              "suspensions_total": )" + std::to_string(suspensions) + R"(,
              "suspended_s_total": )" + std::to_string(suspended_s) + R"(, "grace_us": 100,
              "processes": [
                {"pid": 5001, "start_time_ticks": 1, "class": "offline", "cmdline": "python train.py",
                 "queues": 4, "suspended": true, "open_requests": 0},
                {"pid": 4242, "start_time_ticks": 2, "class": "online", "cmdline": "python serve.py",
                 "queues": 2, "suspended": false, "open_requests": 3},
                {"pid": 5000, "start_time_ticks": 3, "class": "offline", "cmdline": "python train.py --rank 1",
                 "queues": 4, "suspended": true, "open_requests": 0},
                {"pid": 6000, "start_time_ticks": 4, "class": null, "cmdline": "rocminfo",
                 "queues": 1, "suspended": false, "open_requests": 0}],
              "online_request_latency_ms": {"count": )" + std::to_string(requests) + R"(, "p50": 1.7, "p99": 2.15}},
             {"gpu_id": 1234, "can_suspend": false, "reason": "KFD ioctl 1.12 has no debug-trap API",
              "suspended_now": 0, "suspensions_total": 0, "suspended_s_total": 0, "grace_us": null,
              "processes": [], "online_request_latency_ms": {"count": 0, "p50": null, "p99": null}}]
  })");
}

TEST(TopView, RatesBetweenTwoFetches) {
  const Json before = status(100, 40, 10.0);
  const Json after = status(102, 64, 10.5);
  const TopView v = compute_top_view(after, &before, 2.0);
  ASSERT_EQ(v.gpus.size(), 2u);
  const TopGpu& g = v.gpus[1];
  EXPECT_EQ(g.gpu_id, 63420u);
  EXPECT_FALSE(g.since_start);
  ASSERT_TRUE(g.suspensions_per_s);
  EXPECT_DOUBLE_EQ(*g.suspensions_per_s, 12.0);  // 24 suspensions in 2 s
  ASSERT_TRUE(g.offline_progress);
  EXPECT_DOUBLE_EQ(*g.offline_progress, 0.75);   // suspended 0.5 s of 2 s
}

TEST(TopView, WithoutAPreviousFetchRatesAreSinceStart) {
  const TopView v = compute_top_view(status(100, 40, 10.0), nullptr, 0);
  const TopGpu& g = v.gpus[1];
  EXPECT_TRUE(g.since_start);
  EXPECT_DOUBLE_EQ(*g.suspensions_per_s, 0.4);
  EXPECT_DOUBLE_EQ(*g.offline_progress, 0.9);
}

TEST(TopView, DaemonRestartIsNotANegativeRate) {
  const Json before = status(100, 40, 10.0);
  // Uptime went back: a new daemon, already busier than the old one was. Its counters started
  // over, so the difference means nothing.
  const Json after = status(1, 45, 10.2);
  const TopView v = compute_top_view(after, &before, 2.0);
  EXPECT_TRUE(v.gpus[1].since_start);
  EXPECT_DOUBLE_EQ(*v.gpus[1].suspensions_per_s, 45.0);
  // Counters that went down are a restart too.
  const TopView w = compute_top_view(status(200, 2, 0.1), &before, 2.0);
  EXPECT_TRUE(w.gpus[1].since_start);
}

TEST(TopView, ClassesByPriorityAndCounts) {
  const TopView v = compute_top_view(status(100, 40, 10.0), nullptr, 0);
  const TopGpu& g = v.gpus[1];
  ASSERT_EQ(g.classes.size(), 4u);
  EXPECT_EQ(g.classes[0].name, "online");
  EXPECT_EQ(g.classes[0].open_requests, 3);
  EXPECT_EQ(g.classes[1].name, "batch");
  EXPECT_EQ(g.classes[1].processes, 0);
  EXPECT_EQ(g.classes[2].name, "offline");
  EXPECT_EQ(g.classes[2].processes, 2);
  EXPECT_EQ(g.classes[2].suspended, 2);
  EXPECT_EQ(g.classes[3].name, "");  // unmatched last
  EXPECT_EQ(g.processes.front().pid, 4242);
}

TEST(TopView, AnObjectiveShowsWhatServesItAndWhy) {
  Json doc = status(100, 10, 1.0);
  doc["classes"][1]["objective"] = Json::parse(R"({"percentile": 99, "target_ms": 5, "window_s": 10,
      "measured_ms": 2.345, "action": "none", "requests_in_window": 400, "since_s_ago": 75,
      "why": "p99 2.300 ms at most 80% of the target over 400 requests under per_request: trying less",
      "changes": 1})");
  const TopView v = compute_top_view(doc, nullptr, 0);
  ASSERT_EQ(v.objectives.size(), 1u);
  EXPECT_EQ(v.objectives[0].objective, "p99 <= 5 ms over 10 s");
  const std::string frame = render_top(v, TopStyle{});
  EXPECT_NE(frame.find("objective online: p99 <= 5 ms over 10 s  measured 2.35 ms  action none for "),
            std::string::npos)
      << frame;
  EXPECT_NE(frame.find("(p99 2.300 ms at most 80% of the target"), std::string::npos) << frame;
  EXPECT_EQ(top_view_json(v)["objectives"][0]["action"], "none");
}

TEST(TopView, AnLlmObjectiveShowsOneLinePerGoal) {
  Json doc = status(100, 10, 1.0);
  doc["classes"][1]["objective"] = Json::parse(R"({"metric": "ttft", "percentile": 99,
      "target_ms": 500, "window_s": 30, "measured_ms": 812.5, "action": "hold",
      "goals": [{"metric": "ttft", "percentile": 99, "target_ms": 500, "measured_ms": 812.5, "in_window": 150},
                {"metric": "tpot", "percentile": 95, "target_ms": 30, "measured_ms": 21.25, "in_window": 140}],
      "requests_in_window": 290, "since_s_ago": 3,
      "why": "2 TTFTs over the target (1 allowed in 100) under per_request", "changes": 2})");
  const TopView v = compute_top_view(doc, nullptr, 0);
  ASSERT_EQ(v.objectives.size(), 2u);
  EXPECT_EQ(v.objectives[0].metric, "ttft");
  EXPECT_EQ(v.objectives[0].objective, "TTFT p99 <= 500 ms over 30 s");
  EXPECT_EQ(v.objectives[1].objective, "TPOT p95 <= 30 ms over 30 s");
  const std::string frame = render_top(v, TopStyle{});
  EXPECT_NE(frame.find("objective online: TTFT p99 <= 500 ms over 30 s  measured 812.50 ms  action hold"),
            std::string::npos)
      << frame;
  EXPECT_NE(frame.find("objective online: TPOT p95 <= 30 ms over 30 s  measured 21.25 ms  action hold"),
            std::string::npos)
      << frame;
  EXPECT_EQ(top_view_json(v)["objectives"][1]["metric"], "tpot");
}

TEST(TopView, FrameText) {
  const Json before = status(100, 40, 10.0);
  const Json after = status(7302, 64, 10.5, 54);
  TopView v = compute_top_view(after, &before, 2.0);
  v.uptime_s = 7302;  // as the document says: 2h01m
  const std::string expected =
      "gpreemptd 0.1.0  pid 812  up 2h01m  socket /run/gpreempt/gpreemptd.sock\n"
      "\n"
      "GPU 1234 (4d2)  cannot suspend: KFD ioctl 1.12 has no debug-trap API  suspended now 0\n"
      "  suspensions/s 0.0  offline progress 100.0 %  (last 2.0 s)\n"
      "  online requests 0\n"
      "  CLASS    PRIO  PROCS  SUSPENDED  OPEN_REQ\n"
      "  online   10    0      0          0\n"
      "  batch    5     0      0          0\n"
      "  offline  0     0      0          0\n"
      "  no GPU processes\n"
      "\n"
      "GPU 63420 (f7bc)  can suspend  grace 100 us  suspended now 2\n"
      "  suspensions/s 12.0  offline progress 75.0 %  (last 2.0 s)\n"
      "  online requests 54: p50 1.70 ms  p99 2.15 ms*\n"
      "  CLASS    PRIO  PROCS  SUSPENDED  OPEN_REQ\n"
      "  online   10    1      0          3\n"
      "  batch    5     0      0          0\n"
      "  offline  0     2      2          0\n"
      "  (none)   -     1      0          0\n"
      "  PID   CLASS    QUEUES  SUSPENDED  OPEN_REQ  COMMAND\n"
      "  4242  online   2       no         3         python serve.py\n"
      "  5000  offline  4       yes        0         python train.py --rank 1\n"
      "  5001  offline  4       yes        0         python train.py\n"
      "  6000  (none)   1       no         0         rocminfo\n"
      "\n"
      "* fewer than 1000 requests: the p99 is about the maximum\n";
  EXPECT_EQ(render_top(v, TopStyle{}), expected);
}

TEST(TopView, NoColourUnlessAsked) {
  const TopView v = compute_top_view(status(100, 40, 10.0), nullptr, 0);
  EXPECT_EQ(render_top(v, TopStyle{false, 0, 0}).find('\033'), std::string::npos);
  const std::string coloured = render_top(v, TopStyle{true, 0, 0});
  EXPECT_NE(coloured.find("\033[31mGPU 1234"), std::string::npos);   // cannot suspend: red
  EXPECT_NE(coloured.find("\033[33m  5000  offline"), std::string::npos);  // suspended: yellow
}

TEST(TopView, FitsTheTerminal) {
  const TopView v = compute_top_view(status(100, 40, 10.0), nullptr, 0);
  const std::string frame = render_top(v, TopStyle{false, 30, 8});
  std::size_t lines = 0, start = 0;
  while (start < frame.size()) {
    const auto nl = frame.find('\n', start);
    const std::string line = frame.substr(start, nl - start);
    if (lines < 7) {
      EXPECT_LE(line.size(), 30u) << line;
    }
    ++lines;
    start = nl + 1;
  }
  EXPECT_EQ(lines, 8u);
  EXPECT_NE(frame.find("more line(s)"), std::string::npos) << frame;
}

TEST(TopView, MissingKeysAreUnknownNotErrors) {
  const Json doc = Json::parse(R"({"gpus": [{"gpu_id": 1}, "junk"], "classes": 7})");
  const TopView v = compute_top_view(doc, &doc, 1.0);
  ASSERT_EQ(v.gpus.size(), 2u);
  const std::string frame = render_top(v, TopStyle{});
  EXPECT_NE(frame.find("GPU 1 (1)  cannot suspend: ?"), std::string::npos) << frame;
  EXPECT_NE(frame.find("suspensions/s -"), std::string::npos) << frame;
  EXPECT_EQ(compute_top_view(Json(), nullptr, 0).gpus.size(), 0u);
}

TEST(TopView, Json) {
  const Json before = status(100, 40, 10.0);
  const Json j = top_view_json(compute_top_view(status(102, 64, 10.5), &before, 2.0));
  ASSERT_EQ(j["gpus"].size(), 2u);
  const Json& g = j["gpus"][1];
  EXPECT_EQ(g["gpu_id"], 63420);
  EXPECT_EQ(g["suspensions_per_s"], 12.0);
  EXPECT_EQ(g["offline_progress"], 0.75);
  EXPECT_EQ(g["rates_since_start"], false);
  EXPECT_EQ(g["classes"][3]["name"], nullptr);
  EXPECT_EQ(g["online_request_latency_ms"]["p99"], 2.15);
}

}  // namespace
}  // namespace gpreempt::cli
