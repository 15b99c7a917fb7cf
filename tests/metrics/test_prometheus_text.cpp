// The exposition text of a snapshot, byte for byte: a scraper parses it, so any drift from the
// format (ordering, escaping, cumulative buckets, units) is a bug a dashboard would show.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "metrics/prometheus_text.h"

namespace gpreemptd {
namespace {

TEST(PrometheusText, SmallSnapshotExactText) {
  MetricsSnapshot s;
  s.daemon.version = "0.1.0";
  s.daemon.start_time_seconds = 1764100000.5;
  s.daemon.config_reloads_total = 2;
  s.daemon.config_reload_failures_total = 1;
  GpuMetrics g;
  g.gpu_id = 63420;
  g.can_suspend = true;
  g.suspended_processes = 1;
  g.suspend_calls_total = 3;
  g.resume_calls_total = 2;
  g.suspend_timeouts_total = 1;
  g.suspend_latency_seconds = Histogram::with_bounds({0.001, 0.01});
  g.suspend_latency_seconds.observe(0.0005);
  g.suspend_latency_seconds.observe(0.002);
  g.suspend_latency_seconds.observe(0.5);
  s.gpus.push_back(g);
  ClassMetrics online;
  online.gpu_id = 63420;
  online.class_name = "online";
  online.processes = 1;
  online.requests_total = 2;
  online.request_latency_seconds = Histogram::with_bounds({0.001});
  online.request_latency_seconds.observe(0.001);
  online.request_latency_seconds.observe(0.25);
  ClassMetrics offline;
  offline.gpu_id = 63420;
  offline.class_name = "offline";
  offline.processes = 1;
  offline.suspensions_total = 3;
  offline.suspended_seconds_total = 0.125;
  offline.request_latency_seconds = Histogram::with_bounds({0.001});
  // Listed online first: the text orders by class name all the same.
  s.classes = {online, offline};
  s.processes.push_back({63420, "offline", 4242, 3, 0.125, 0});

  const std::string expected =
      "# HELP gpreempt_daemon_info gpreemptd build information (always 1).\n"
      "# TYPE gpreempt_daemon_info gauge\n"
      "gpreempt_daemon_info{version=\"0.1.0\"} 1\n"
      "# HELP gpreempt_daemon_start_time_seconds Unix time gpreemptd started, in seconds.\n"
      "# TYPE gpreempt_daemon_start_time_seconds gauge\n"
      "gpreempt_daemon_start_time_seconds 1764100000.5\n"
      "# HELP gpreempt_config_reloads_total Configuration reloads (SIGHUP or gpreempt ctl reload) that took effect.\n"
      "# TYPE gpreempt_config_reloads_total counter\n"
      "gpreempt_config_reloads_total 2\n"
      "# HELP gpreempt_config_reload_failures_total Configuration reloads rejected as invalid; the running configuration was kept.\n"
      "# TYPE gpreempt_config_reload_failures_total counter\n"
      "gpreempt_config_reload_failures_total 1\n"
      "# HELP gpreempt_requests_expired_total Hinted requests gpreemptd ended because no end came within max_request_ms.\n"
      "# TYPE gpreempt_requests_expired_total counter\n"
      "gpreempt_requests_expired_total 0\n"
      "# HELP gpreempt_hints_rate_limited_total begin/expect hints refused because their connection exceeded its hint rate.\n"
      "# TYPE gpreempt_hints_rate_limited_total counter\n"
      "gpreempt_hints_rate_limited_total 0\n"
      "# HELP gpreempt_socket_connections_refused_total Socket connections refused at accept, by reason.\n"
      "# TYPE gpreempt_socket_connections_refused_total counter\n"
      "gpreempt_socket_connections_refused_total{reason=\"per_uid_cap\"} 0\n"
      "gpreempt_socket_connections_refused_total{reason=\"no_descriptor\"} 0\n"
      "# HELP gpreempt_socket_connections_closed_total Socket connections gpreemptd closed, by reason (a peer that does not read its replies, or sends nothing for idle_timeout_ms).\n"
      "# TYPE gpreempt_socket_connections_closed_total counter\n"
      "gpreempt_socket_connections_closed_total{reason=\"slow_reader\"} 0\n"
      "gpreempt_socket_connections_closed_total{reason=\"idle\"} 0\n"
      "# HELP gpreempt_gpu_can_suspend 1 when debug-trap suspend works on this GPU, 0 when gpreemptd falls back to queue priorities.\n"
      "# TYPE gpreempt_gpu_can_suspend gauge\n"
      "gpreempt_gpu_can_suspend{gpu=\"63420\"} 1\n"
      "# HELP gpreempt_gpu_suspended_processes Processes whose queues on this GPU are suspended now.\n"
      "# TYPE gpreempt_gpu_suspended_processes gauge\n"
      "gpreempt_gpu_suspended_processes{gpu=\"63420\"} 1\n"
      "# HELP gpreempt_suspend_calls_total SUSPEND_QUEUES calls issued on this GPU (one per decision).\n"
      "# TYPE gpreempt_suspend_calls_total counter\n"
      "gpreempt_suspend_calls_total{gpu=\"63420\"} 3\n"
      "# HELP gpreempt_resume_calls_total RESUME_QUEUES calls issued on this GPU.\n"
      "# TYPE gpreempt_resume_calls_total counter\n"
      "gpreempt_resume_calls_total{gpu=\"63420\"} 2\n"
      "# HELP gpreempt_actuation_failures_total Suspend or resume calls that failed: reason=\"error\" "
      "(an error return or queues the kernel reported invalid) or reason=\"timeout\" (the scheduler's "
      "preemption timed out, bit 30).\n"
      "# TYPE gpreempt_actuation_failures_total counter\n"
      "gpreempt_actuation_failures_total{gpu=\"63420\",action=\"suspend\",reason=\"error\"} 0\n"
      "gpreempt_actuation_failures_total{gpu=\"63420\",action=\"suspend\",reason=\"timeout\"} 1\n"
      "gpreempt_actuation_failures_total{gpu=\"63420\",action=\"resume\",reason=\"error\"} 0\n"
      "gpreempt_actuation_failures_total{gpu=\"63420\",action=\"resume\",reason=\"timeout\"} 0\n"
      "# HELP gpreempt_suspend_latency_seconds Time from issuing SUSPEND_QUEUES on this GPU to its return, in seconds.\n"
      "# TYPE gpreempt_suspend_latency_seconds histogram\n"
      "gpreempt_suspend_latency_seconds_bucket{gpu=\"63420\",le=\"0.001\"} 1\n"
      "gpreempt_suspend_latency_seconds_bucket{gpu=\"63420\",le=\"0.01\"} 2\n"
      "gpreempt_suspend_latency_seconds_bucket{gpu=\"63420\",le=\"+Inf\"} 3\n"
      "gpreempt_suspend_latency_seconds_sum{gpu=\"63420\"} 0.5025\n"
      "gpreempt_suspend_latency_seconds_count{gpu=\"63420\"} 3\n"
      "# HELP gpreempt_class_processes GPU processes of this class on this GPU now.\n"
      "# TYPE gpreempt_class_processes gauge\n"
      "gpreempt_class_processes{gpu=\"63420\",class=\"offline\"} 1\n"
      "gpreempt_class_processes{gpu=\"63420\",class=\"online\"} 1\n"
      "# HELP gpreempt_suspensions_total Times a process of this class was suspended on this GPU.\n"
      "# TYPE gpreempt_suspensions_total counter\n"
      "gpreempt_suspensions_total{gpu=\"63420\",class=\"offline\"} 3\n"
      "gpreempt_suspensions_total{gpu=\"63420\",class=\"online\"} 0\n"
      "# HELP gpreempt_suspended_seconds_total Seconds processes of this class spent suspended on this GPU, summed over processes.\n"
      "# TYPE gpreempt_suspended_seconds_total counter\n"
      "gpreempt_suspended_seconds_total{gpu=\"63420\",class=\"offline\"} 0.125\n"
      "gpreempt_suspended_seconds_total{gpu=\"63420\",class=\"online\"} 0\n"
      "# HELP gpreempt_requests_total Online requests of this class finished on this GPU.\n"
      "# TYPE gpreempt_requests_total counter\n"
      "gpreempt_requests_total{gpu=\"63420\",class=\"offline\"} 0\n"
      "gpreempt_requests_total{gpu=\"63420\",class=\"online\"} 2\n"
      "# HELP gpreempt_request_latency_seconds Online request latency (begin to end), in seconds.\n"
      "# TYPE gpreempt_request_latency_seconds histogram\n"
      "gpreempt_request_latency_seconds_bucket{gpu=\"63420\",class=\"offline\",le=\"0.001\"} 0\n"
      "gpreempt_request_latency_seconds_bucket{gpu=\"63420\",class=\"offline\",le=\"+Inf\"} 0\n"
      "gpreempt_request_latency_seconds_sum{gpu=\"63420\",class=\"offline\"} 0\n"
      "gpreempt_request_latency_seconds_count{gpu=\"63420\",class=\"offline\"} 0\n"
      "gpreempt_request_latency_seconds_bucket{gpu=\"63420\",class=\"online\",le=\"0.001\"} 1\n"
      "gpreempt_request_latency_seconds_bucket{gpu=\"63420\",class=\"online\",le=\"+Inf\"} 2\n"
      "gpreempt_request_latency_seconds_sum{gpu=\"63420\",class=\"online\"} 0.251\n"
      "gpreempt_request_latency_seconds_count{gpu=\"63420\",class=\"online\"} 2\n"
      "# HELP gpreempt_process_suspensions_total Times this process was suspended on this GPU.\n"
      "# TYPE gpreempt_process_suspensions_total counter\n"
      "gpreempt_process_suspensions_total{gpu=\"63420\",class=\"offline\",pid=\"4242\"} 3\n"
      "# HELP gpreempt_process_suspended_seconds_total Seconds this process spent suspended on this GPU.\n"
      "# TYPE gpreempt_process_suspended_seconds_total counter\n"
      "gpreempt_process_suspended_seconds_total{gpu=\"63420\",class=\"offline\",pid=\"4242\"} 0.125\n"
      "# HELP gpreempt_process_requests_total Online requests of this process finished on this GPU.\n"
      "# TYPE gpreempt_process_requests_total counter\n"
      "gpreempt_process_requests_total{gpu=\"63420\",class=\"offline\",pid=\"4242\"} 0\n";
  EXPECT_EQ(render_prometheus_text(s), expected);
}

TEST(PrometheusText, EmptySnapshotHasOnlyDaemonFamilies) {
  const std::string text = render_prometheus_text(MetricsSnapshot{});
  EXPECT_NE(text.find("gpreempt_daemon_info{version=\"\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("gpu="), std::string::npos) << text;
  EXPECT_EQ(text.find("# TYPE gpreempt_suspensions_total"), std::string::npos) << text;
}

// Buckets are stored per bucket and must come out cumulative, non-decreasing, ending at _count.
TEST(PrometheusText, HistogramBucketsAreCumulative) {
  MetricsSnapshot s;
  GpuMetrics g;
  g.gpu_id = 1;
  g.suspend_latency_seconds = Histogram::with_bounds({0.1, 0.2, 0.3});
  for (double v : {0.05, 0.1, 0.15, 0.15, 0.25, 7.0}) g.suspend_latency_seconds.observe(v);
  EXPECT_EQ(g.suspend_latency_seconds.bucket_counts, (std::vector<std::uint64_t>{2, 2, 1, 1}));
  s.gpus.push_back(g);
  const std::string text = render_prometheus_text(s);
  EXPECT_NE(text.find("gpreempt_suspend_latency_seconds_bucket{gpu=\"1\",le=\"0.1\"} 2\n"
                      "gpreempt_suspend_latency_seconds_bucket{gpu=\"1\",le=\"0.2\"} 4\n"
                      "gpreempt_suspend_latency_seconds_bucket{gpu=\"1\",le=\"0.3\"} 5\n"
                      "gpreempt_suspend_latency_seconds_bucket{gpu=\"1\",le=\"+Inf\"} 6\n"
                      "gpreempt_suspend_latency_seconds_sum{gpu=\"1\"} 7.7\n"
                      "gpreempt_suspend_latency_seconds_count{gpu=\"1\"} 6\n"),
            std::string::npos)
      << text;
}

TEST(PrometheusText, DefaultBucketsAreAscendingSeconds) {
  for (const Histogram& h : {Histogram::suspend_latency(), Histogram::request_latency()}) {
    ASSERT_EQ(h.bucket_counts.size(), h.upper_bounds.size() + 1);
    for (std::size_t i = 1; i < h.upper_bounds.size(); ++i)
      EXPECT_LT(h.upper_bounds[i - 1], h.upper_bounds[i]);
    EXPECT_LE(h.upper_bounds.back(), 10.0);  // seconds, not milliseconds
  }
  EXPECT_THROW(Histogram::with_bounds({0.2, 0.1}), std::invalid_argument);
  EXPECT_THROW(Histogram::with_bounds({0.1, std::numeric_limits<double>::infinity()}),
               std::invalid_argument);
}

TEST(PrometheusText, MismatchedHistogramIsRefused) {
  MetricsSnapshot s;
  GpuMetrics g;
  g.suspend_latency_seconds.upper_bounds = {0.1};
  g.suspend_latency_seconds.bucket_counts = {1};  // no +Inf entry
  s.gpus.push_back(g);
  EXPECT_THROW(render_prometheus_text(s), std::invalid_argument);
}

TEST(PrometheusText, LabelValuesAndHelpAreEscaped) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label_value("plain {x}=y,"), "plain {x}=y,");
  EXPECT_EQ(escape_help("line\\one\nline \"two\""), "line\\\\one\\nline \"two\"");

  MetricsSnapshot s;
  ClassMetrics c;
  c.gpu_id = 2;
  c.class_name = "we\"ird\\class\nname";
  s.classes.push_back(c);
  const std::string text = render_prometheus_text(s);
  EXPECT_NE(text.find("gpreempt_class_processes{gpu=\"2\",class=\"we\\\"ird\\\\class\\nname\"} 0\n"),
            std::string::npos)
      << text;
}

TEST(PrometheusText, ValuesFormatAsTheFormatReadsThem) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(1e-05), "1e-05");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

}  // namespace
}  // namespace gpreemptd

namespace gpreemptd {
namespace {

TEST(PrometheusText, AnObjectiveShowsItsTargetMeasureAndTheActionInForce) {
  MetricsSnapshot s;
  s.objectives.push_back({"online", 99, 0.005, 0.0031, "per_request", 2, "latency"});
  s.objectives.push_back({"online", 99, 0.03, 0.021, "per_request", 2, "tpot"});
  s.objectives.push_back({"batch", 99.9, 0.05, std::nullopt, "hold", 0, "latency"});
  const std::string text = render_prometheus_text(s);
  for (const char* line :
       {"gpreempt_objective_target_seconds{class=\"online\",metric=\"latency\",percentile=\"99\"} 0.005\n",
        "gpreempt_objective_target_seconds{class=\"online\",metric=\"tpot\",percentile=\"99\"} 0.03\n",
        "gpreempt_objective_target_seconds{class=\"batch\",metric=\"latency\",percentile=\"99.9\"} 0.05\n",
        "gpreempt_objective_latency_seconds{class=\"online\",metric=\"latency\",percentile=\"99\"} 0.0031\n",
        "gpreempt_objective_latency_seconds{class=\"online\",metric=\"tpot\",percentile=\"99\"} 0.021\n",
        "gpreempt_objective_action{class=\"online\",action=\"none\"} 0\n",
        "gpreempt_objective_action{class=\"online\",action=\"per_request\"} 1\n",
        "gpreempt_objective_action{class=\"batch\",action=\"hold\"} 1\n",
        "gpreempt_objective_action_changes_total{class=\"online\"} 2\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  // The action is the class's: once per class, whatever the number of its goals.
  const std::string once = "gpreempt_objective_action_changes_total{class=\"online\"}";
  EXPECT_EQ(text.find(once), text.rfind(once)) << text;
  // No request in the window: no measure rather than a made-up 0.
  EXPECT_EQ(text.find("gpreempt_objective_latency_seconds{class=\"batch\""), std::string::npos) << text;
}

}  // namespace
}  // namespace gpreemptd
