// Serves each class's latency objective (objective.h) with the least protection that keeps it.
//
// Per class with an objective, the controller keeps the request latencies of the last window, each
// tagged with the protection in force when it ended, and moves one step at a time:
//   * up (none -> late -> per_request -> hold) as soon as the requests served under the current protection
//     break the objective: their percentile is over the target with at least min_samples of them,
//     or more of them are over the target than min_samples allows (the percentile can no longer
//     come back under it);
//   * down one step once the current protection has held for a whole window, with min_samples
//     under it, at or under relax_fraction of the target — unless the weaker protection broke the
//     objective within retry_after: conditions change, so it is tried again after that.
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
    Duration latency;
    Protection under;
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

  // The protection in force for `cls` (per_request for a class without an objective).
  Protection action(const std::string& cls) const;
  // The window's percentile of every request of the class (whatever the protection); nullopt
  // with no request in the window.
  std::optional<Duration> measured(const std::string& cls, Time now) const;
  const std::map<std::string, State>& states() const { return states_; }

 private:
  static void prune(State& s, Time now);
  // The percentile of the samples served under the current protection, their count and how many
  // were over the target.
  struct Evidence {
    std::size_t n = 0, over = 0;
    Duration value{};
  };
  static Evidence evidence(const State& s);
  static void move(State& s, Protection to, Time now, std::string why);

  std::map<std::string, State> states_;
};

}  // namespace gpreempt::sched
