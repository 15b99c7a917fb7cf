// What gpreemptd exposes to Prometheus, as plain data: the daemon fills one MetricsSnapshot from
// its own accounting and hands it to MetricsServer::publish(); prometheus_text.h renders it. No
// locking, no clock and no I/O here, so the daemon decides how often a snapshot is taken and
// tests build one by hand.
//
// Units are the base units Prometheus expects: seconds (never ms or µs) and plain counts.
// Counters only grow for as long as the daemon runs; the per-process entries are for processes
// that exist now, while the per-class entries keep counting after a process has gone, so a
// class's totals survive its processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpreemptd {

// A Prometheus histogram in seconds. `bucket_counts[i]` counts the observations in
// (upper_bounds[i-1], upper_bounds[i]] — per bucket, not cumulative — and the extra last entry the
// ones above every bound (+Inf). The renderer makes them cumulative as the format requires.
struct Histogram {
  std::vector<double> upper_bounds;         // ascending, finite; +Inf is implied
  std::vector<std::uint64_t> bucket_counts; // upper_bounds.size() + 1 entries
  double sum = 0;                           // of every observed value, seconds

  // Empty histogram over `bounds` (ascending, finite; throws std::invalid_argument otherwise).
  static Histogram with_bounds(std::vector<double> bounds);
  // One SUSPEND ioctl (issue → return): 10 µs … 1 s.
  static Histogram suspend_latency();
  // One online request (begin → end hint, or busy → idle for transparent detection): 100 µs … 10 s.
  static Histogram request_latency();

  void observe(double seconds);
  std::uint64_t count() const;
};

// Per GPU (label gpu = the KFD gpu_id in decimal, as sysfs prints it).
struct GpuMetrics {
  std::uint32_t gpu_id = 0;
  bool can_suspend = false;              // debug-trap suspend works on this GPU (else fallback)
  std::uint64_t suspended_processes = 0; // processes whose queues are suspended now
  std::uint64_t suspend_calls_total = 0; // SUSPEND_QUEUES ioctls issued (one per decision)
  std::uint64_t resume_calls_total = 0;  // RESUME_QUEUES ioctls issued
  // Actuations that did not do what was asked: an error return or a queue with bit 31 it did not
  // expect (failed), or the scheduler's preemption timing out, bit 30 (timed_out).
  std::uint64_t suspend_failures_total = 0;
  std::uint64_t suspend_timeouts_total = 0;
  std::uint64_t resume_failures_total = 0;
  std::uint64_t resume_timeouts_total = 0;
  Histogram suspend_latency_seconds = Histogram::suspend_latency();
};

// Per (GPU, class). `class_name` is the configured class; "" for GPU processes no class matched
// (Prometheus treats an empty label value as an absent label).
struct ClassMetrics {
  std::uint32_t gpu_id = 0;
  std::string class_name;
  std::uint64_t processes = 0;            // GPU processes of this class on this GPU now
  std::uint64_t suspensions_total = 0;    // times a process of this class was suspended
  double suspended_seconds_total = 0;     // summed over its processes
  std::uint64_t requests_total = 0;       // online requests finished
  Histogram request_latency_seconds = Histogram::request_latency();
};

// Per (GPU, class, pid), for the processes alive now.
struct ProcessMetrics {
  std::uint32_t gpu_id = 0;
  std::string class_name;
  int pid = 0;
  std::uint64_t suspensions_total = 0;
  double suspended_seconds_total = 0;
  std::uint64_t requests_total = 0;
};

struct DaemonMetrics {
  std::string version;              // gpreemptd --version
  double start_time_seconds = 0;    // Unix time the daemon started
  std::uint64_t config_reloads_total = 0;          // successful SIGHUP / `ctl reload`
  std::uint64_t config_reload_failures_total = 0;  // rejected configs (the old one kept)
  // What the socket's bounds stopped (docs/gpreemptd.md, "The socket").
  std::uint64_t requests_expired_total = 0;     // begins ended by max_request_ms
  std::uint64_t hints_rate_limited_total = 0;   // begin/expect beyond the connection's bucket
  std::uint64_t connections_refused_per_uid_cap_total = 0;
  std::uint64_t connections_refused_no_descriptor_total = 0;
  std::uint64_t connections_dropped_slow_reader_total = 0;
  std::uint64_t connections_closed_idle_total = 0;
};

// Per goal of a class's objective ([[class]] slo): the target, the window's measure and the
// protection serving the objective (sched/slo_controller.h; the same for each goal of a class).
struct ObjectiveMetrics {
  std::string class_name;
  double percentile = 99;
  double target_seconds = 0;
  std::optional<double> latency_seconds;  // the window's percentile; none without a measure
  std::string action;                     // none, late, per_request, hold
  std::uint64_t action_changes_total = 0;
  std::string metric = "latency";  // what the goal measures: latency, ttft, tpot
};

struct MetricsSnapshot {
  DaemonMetrics daemon;
  std::vector<GpuMetrics> gpus;
  std::vector<ObjectiveMetrics> objectives;
  std::vector<ClassMetrics> classes;
  std::vector<ProcessMetrics> processes;
};

}  // namespace gpreemptd
