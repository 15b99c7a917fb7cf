// A class's objective (`[[class]] slo = { p99_ms = 5 }`, and for LLM serving
// `slo = { ttft_p99_ms = 500, tpot_p99_ms = 30 }`): for each goal it states, a percentile of one
// measure of its requests over a sliding window must stay at or under a target. The measures are a
// request's latency (begin to end), its time to first token (TTFT: begin to the first token the
// client reports) and its time per output token (TPOT: (end - first token) / (tokens - 1)). With
// an objective, the scheduler spends preemptions on the class only as far as the objective needs
// them (slo_controller.h); without one, every request is protected (today's rule).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/time.h"

namespace gpreempt::sched {

// What a goal measures of each request.
enum class Metric { kLatency, kTtft, kTpot };
const char* to_string(Metric m);  // "latency", "ttft", "tpot" (the metrics' `metric` label)

// One goal: the `percentile` of the window's `metric` values at or under `target`.
struct Goal {
  Metric metric = Metric::kLatency;
  double percentile = 99;  // in (0, 100)
  Duration target{};
  // "p99 <= 5 ms", "TTFT p99 <= 500 ms"
  std::string describe() const;
  bool operator==(const Goal&) const = default;
};

struct Objective {
  // The request-latency goal (`p99_ms`); target zero when the class states none (an LLM class may
  // state only TTFT/TPOT: a request lasting seconds has no useful end-to-end target).
  double percentile = 99;
  Duration target{};
  Duration window = std::chrono::seconds(10);
  std::optional<Goal> ttft;  // `ttft_p99_ms`
  std::optional<Goal> tpot;  // `tpot_p99_ms`

  // The goals stated, request latency first, then TTFT, then TPOT.
  std::vector<Goal> goals() const;
  // A class reporting tokens: its requests' lateness (kLate) is judged per request on its tokens
  // (request_tokens.h), not on how long the process has been busy.
  bool keyed_on_tokens() const { return ttft.has_value() || tpot.has_value(); }
  // "p99 <= 5 ms over 10 s", "TTFT p99 <= 500 ms, TPOT p99 <= 30 ms over 10 s"
  std::string describe() const;
  bool operator==(const Objective&) const = default;
};

// What the scheduler does for a class's requests, from the least to the most protection (and
// offline throughput lost):
enum class Protection {
  kNone,        // nothing: lower classes keep running while its requests run
  kLate,        // a suspension only for a request that is late (late_after; request_tokens.h)
  kPerRequest,  // a suspension per request, resumed resume_after_idle after it ends
  kHold,        // lower classes held suspended across close requests (hold_after_idle)
};
const char* to_string(Protection p);  // "none", "late", "per_request", "hold"
// The next stronger / weaker protection (the same at either end).
Protection stronger(Protection p);
Protection weaker(Protection p);
// How long a request runs unprotected under kLate: half the target, leaving the other half for
// the suspension and the rest of the request.
Duration late_after(const Objective& o);

// The percentile key of the config ("p99_ms" -> 99, "p999_ms" -> 99.9); nullopt for another key.
std::optional<double> percentile_of_key(const std::string& key);
// The same with a metric prefix: "ttft_p99_ms" -> {kTtft, 99}, "p99_ms" -> {kLatency, 99}.
std::optional<std::pair<Metric, double>> goal_of_key(const std::string& key);

}  // namespace gpreempt::sched
