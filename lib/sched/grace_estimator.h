// The grace period of a GPU's next suspend, from the lengths of the kernels its suspendable
// processes have been running.
//
// Rule: let p90 be the 90th percentile of the last kSamples observed kernel lengths.
//   * no samples yet           → grace_default
//   * p90 <= grace_drain_limit → grace = p90 * 5/4: short kernels finish inside the grace period,
//     so nothing is CWSR-saved and restored (the save delays the online request, the restore the
//     offline one), and waiting costs the online request at most about one short kernel;
//   * otherwise                → grace_min: waiting for a long kernel would cost the online
//     request more than saving its waves, so save them at once.
#pragma once

#include <array>
#include <cstddef>

#include "sched/arbiter_config.h"
#include "sched/time.h"

namespace gpreempt::sched {

class GraceEstimator {
 public:
  static constexpr std::size_t kSamples = 64;

  void observe(Duration kernel_length);
  Duration grace(const ArbiterConfig& config) const;
  std::size_t samples() const { return count_; }

 private:
  std::array<Duration, kSamples> ring_{};
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

}  // namespace gpreempt::sched
