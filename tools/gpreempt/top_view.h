// `gpreempt top`'s picture of gpreemptd, computed from status documents (docs/protocol.md) and
// rendered as text: pure functions, so tests feed fixed documents and compare frames.
//
// Rates need two documents: with `previous` they cover the time between the two fetches; without
// it (the first frame, `--once`) they are averages since the daemon started (uptime_s).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::cli {

struct TopClassRow {
  std::string name;                 // "" for processes no class matched
  std::optional<int64_t> priority;  // from the document's classes; nullopt when unmatched/unknown
  int processes = 0;
  int suspended = 0;                // of those, suspended now
  int64_t open_requests = 0;
};

struct TopProcessRow {
  int64_t pid = 0;
  std::string class_name;  // "" when unmatched
  int64_t queues = 0;
  bool suspended = false;
  int64_t open_requests = 0;
  std::string cmdline;
};

struct TopGpu {
  uint32_t gpu_id = 0;
  bool can_suspend = false;
  std::string reason;  // why not, when !can_suspend
  int64_t suspended_now = 0;
  std::optional<int64_t> grace_us;
  // The rates below are averages since the daemon started (no usable previous document: the
  // first frame, --once, a GPU that was not there before, or a daemon restart).
  bool since_start = true;
  std::optional<double> suspensions_per_s;
  // 1 − (suspended seconds / elapsed seconds) over the window: the share of time the GPU's lower
  // classes could run. nullopt when the window is empty.
  std::optional<double> offline_progress;
  int64_t requests = 0;  // online requests the latency figures cover
  std::optional<double> p50_ms, p99_ms;
  std::vector<TopClassRow> classes;  // highest priority first, unmatched last
  std::vector<TopProcessRow> processes;
};

// One goal of a class's objective and what serves it (the status's classes[].objective and its
// goals: request latency, TTFT, TPOT).
struct TopObjective {
  std::string class_name;
  std::string metric = "latency";  // latency, ttft, tpot
  std::string objective;           // "p99 <= 5 ms over 10 s", "TTFT p99 <= 500 ms over 10 s"
  std::optional<double> measured_ms;
  std::string action;  // none, late, per_request, hold
  std::optional<double> since_s_ago;
  std::string why;
};

struct TopView {
  std::string daemon_version;
  std::optional<int64_t> daemon_pid;
  std::optional<double> uptime_s;
  std::string socket_path;
  double window_s = 0;  // the time windowed rates cover (else the uptime)
  std::vector<TopObjective> objectives;
  std::vector<TopGpu> gpus;
};

// `previous` and `elapsed_s` (seconds between the two fetches) are optional; missing or
// mistyped keys become "unknown", never an exception.
TopView compute_top_view(const nlohmann::ordered_json& current, const nlohmann::ordered_json* previous,
                         double elapsed_s);

struct TopStyle {
  bool color = false;  // ANSI colour and bold (a TTY without NO_COLOR)
  int width = 0;       // cut lines to this many columns (0: never)
  int height = 0;      // at most this many lines (0: all); the last one says how many were left out
};

// One frame of text, ending in '\n'.
std::string render_top(const TopView& view, const TopStyle& style);

// The view as one JSON object (`gpreempt top --json`, one line per frame).
nlohmann::ordered_json top_view_json(const TopView& view);

}  // namespace gpreempt::cli
