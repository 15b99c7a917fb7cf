#include "kfd/grace.h"

#include "gpreempt/kfd_abi.h"

namespace gpreempt::kfd {

uint32_t grace_units_from_us(uint64_t us, uint32_t clock_mhz) {
  if (clock_mhz == 0) return KFD_USE_DEFAULT_GRACE_PERIOD;
  constexpr uint64_t kMax = KFD_USE_DEFAULT_GRACE_PERIOD - 1;
  // us * MHz = clocks; guard the multiplication against overflow before dividing.
  if (us > kMax * 1000 / clock_mhz) return static_cast<uint32_t>(kMax);
  uint64_t units = (us * clock_mhz + 999) / 1000;
  if (units == 0) units = 1;
  return static_cast<uint32_t>(units > kMax ? kMax : units);
}

double grace_units_to_us(uint32_t units, uint32_t clock_mhz) {
  if (clock_mhz == 0) return 0.0;
  return static_cast<double>(units) * 1000.0 / static_cast<double>(clock_mhz);
}

}  // namespace gpreempt::kfd
