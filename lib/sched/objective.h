// A class's latency objective (`[[class]] slo = { p99_ms = 5 }`): a percentile of its requests'
// latency, start to end, over a sliding window must stay at or under a target. With one, the
// scheduler spends preemptions on the class only as far as the objective needs them
// (slo_controller.h); without one, every request is protected (today's rule).
#pragma once

#include <optional>
#include <string>

#include "sched/time.h"

namespace gpreempt::sched {

struct Objective {
  double percentile = 99;  // of the window's request latencies, in (0, 100)
  Duration target{};       // the latency the percentile must stay at or under
  Duration window = std::chrono::seconds(10);

  // "p99 <= 5 ms over 10 s"
  std::string describe() const;
  bool operator==(const Objective&) const = default;
};

// What the scheduler does for a class's requests, from the least to the most protection (and
// offline throughput lost):
enum class Protection {
  kNone,        // nothing: lower classes keep running while its requests run
  kLate,        // a suspension only for a request still running after half the target (late_after)
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

}  // namespace gpreempt::sched
