// The SUSPEND_QUEUES grace period. The kernel's unit is 1,000 GPU clock cycles of wave run time
// allowed before the context-save preemption starts (programmed into CP_IQ_WAIT_TIME2.SCH_WAVE on
// GFX9/10; docs/kfd-interface.md#grace-period) — not microseconds. 0xffffffff leaves the
// scheduler's default alone; GFX9/10 kernels replace 0 by 1 because the CP treats 0 as "wait
// forever".
#pragma once

#include <cstdint>

namespace gpreempt::kfd {

// Units covering at least `us` microseconds at `clock_mhz` (a GPU's max_engine_clk_fcompute):
// ceil(us * MHz / 1000), at least 1, capped below the "default" value. clock_mhz == 0 → the
// default grace period (the clock is unknown, so no honest conversion exists).
uint32_t grace_units_from_us(uint64_t us, uint32_t clock_mhz);
// The inverse, in microseconds (fractional).
double grace_units_to_us(uint32_t units, uint32_t clock_mhz);

}  // namespace gpreempt::kfd
