#include "eval/des/arrivals.h"

#include <cmath>

namespace gpreempt::eval::des {

using sim::gpu::SimTime;

Arrivals::Arrivals(const ArrivalDef& def, uint64_t seed) : def_(def), rng_(seed) {}

double Arrivals::uniform() {
  return (static_cast<double>(rng_() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

SimTime Arrivals::gap(double mean_ns) {
  return static_cast<SimTime>(-std::log(uniform()) * mean_ns);
}

SimTime Arrivals::next() {
  switch (def_.kind) {
    case ArrivalKind::kPoisson:
      t_ += gap(1e9 / def_.rate_hz);
      break;
    case ArrivalKind::kPeriodic:
      t_ += static_cast<SimTime>(1e9 / def_.rate_hz);
      break;
    case ArrivalKind::kBursty:
      if (left_in_burst_ == 0) {
        // Bursts arrive as a Poisson process at rate_hz / burst_size: the mean rate is rate_hz.
        t_ += gap(1e9 * def_.burst_size / def_.rate_hz);
        left_in_burst_ = def_.burst_size;
      } else {
        t_ += static_cast<SimTime>(def_.burst_gap_us * 1e3);
      }
      --left_in_burst_;
      break;
    case ArrivalKind::kUniform:
      t_ += static_cast<SimTime>(
          1e6 * (def_.min_interval_ms + (def_.max_interval_ms - def_.min_interval_ms) * uniform()));
      break;
  }
  return t_;
}

}  // namespace gpreempt::eval::des
