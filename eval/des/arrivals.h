// When the requests of one online client arrive: Poisson, periodic, bursty (bursts of
// burst_size requests at Poisson times, mean rate rate_hz) or uniform random intervals. Seeded,
// and independent of the standard library's distributions, so a seed gives the same arrivals on
// every platform.
#pragma once

#include <cstdint>
#include <random>

#include "eval/des/spec.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des {

class Arrivals {
 public:
  Arrivals(const ArrivalDef& def, uint64_t seed);
  // The next arrival time (simulated ns), strictly non-decreasing.
  sim::gpu::SimTime next();

 private:
  double uniform();  // (0, 1)
  sim::gpu::SimTime gap(double mean_ns);

  ArrivalDef def_;
  std::mt19937_64 rng_;
  sim::gpu::SimTime t_ = 0;
  uint32_t left_in_burst_ = 0;
};

}  // namespace gpreempt::eval::des
