// Serves each class's latency objective (objective.h) with the least protection that keeps it.
//
// Per class with an objective, the controller keeps the last window's measures of each goal the
// objective states (request latency, TTFT, TPOT; objective.h), each tagged with the protection in
// force when it was measured, and moves one step at a time:
//   * up (none -> late -> per_request -> hold) as soon as the measures taken under the current
//     protection break any goal: their percentile is over its target with at least min_samples of
//     them, or more of them are over the target than min_samples allows (the percentile can no
//     longer come back under it). A TTFT miss and a TPOT miss both escalate: the protection must
//     keep every goal;
//   * down one step once the current protection has held for a whole window and every goal has,
//     with min_samples under it, stayed at or under relax_fraction of its target — unless the
//     weaker protection broke the objective within retry_after: conditions change, so it is tried
//     again after that. So the cheapest protection kept is the cheapest that keeps all goals.
// A class starts at per_request, the rule without an objective. Every move says why.
// Pure: times come from the caller (the daemon's clock, the DES's, a test's).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "sched/objective.h"
#include "sched/sched_class.h"
#include "sched/time.h"

namespace gpreempt::sched {

class SloController {
 public:
  static constexpr double kRelaxFraction = 0.8;
  static constexpr int kRetryAfterWindows = 6;
  // Requests needed to judge a percentile: enough for one to lie above it, and never fewer
  // than 20 (p99: 100, p99.9: 1000).
  static std::size_t min_samples(double percentile);

  struct Sample {
    Time at;
    Duration value;  // of `metric`
    Protection under;
    Metric metric = Metric::kLatency;
  };
  struct State {
    Objective objective;
    Protection action = Protection::kPerRequest;
    Time since{};     // when `action` took force
    std::string why;  // why it is in force
    std::deque<Sample> samples;  // the window's, oldest first
    std::map<Protection, Time> broke_at;  // when each protection last broke the objective
    uint64_t changes = 0;
  };

  // The classes with an objective (others are not tracked). A class whose objective is unchanged
  // keeps its state; a new or changed one starts at per_request at `now`.
  void configure(const std::vector<SchedClass>& classes, Time now);

  // A request of class `cls` ended after `latency`: true when the class's protection changed.
  bool record(const std::string& cls, Time now, Duration latency);
  // A request of class `cls` measured `value` of `metric` (its TTFT at its first token, its TPOT
  // at its end): true when the class's protection changed. Ignored when the class's objective
  // states no goal for the metric.
  bool record(const std::string& cls, Time now, Metric metric, Duration value);

  // The protection in force for `cls` (per_request for a class without an objective).
  Protection action(const std::string& cls) const;
  // The window's percentile of every request of the class (whatever the protection); nullopt
  // with no request in the window.
  std::optional<Duration> measured(const std::string& cls, Time now) const;
  // The same for one goal of its objective: its metric at its percentile.
  std::optional<Duration> measured(const std::string& cls, const Goal& goal, Time now) const;
  // How many measures of `metric` the window holds.
  std::size_t count(const std::string& cls, Metric metric, Time now) const;
  const std::map<std::string, State>& states() const { return states_; }

 private:
  static void prune(State& s, Time now);
  // The percentile of the samples served under the current protection, their count and how many
  // were over the target.
  struct Evidence {
    std::size_t n = 0, over = 0;
    Duration value{};
  };
  static Evidence evidence(const State& s, const Goal& goal);
  static void move(State& s, Protection to, Time now, std::string why);

  std::map<std::string, State> states_;
};

}  // namespace gpreempt::sched
