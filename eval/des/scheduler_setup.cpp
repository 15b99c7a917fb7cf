#include "eval/des/scheduler_setup.h"

#include <cmath>

namespace gpreempt::eval::des {

sched::ArbiterConfig arbiter_config(const PolicyDef& p) {
  using std::chrono::nanoseconds;
  auto ns = [](double v, double scale) { return nanoseconds(static_cast<int64_t>(std::llround(v * scale))); };
  sched::ArbiterConfig c;
  if (p.grace_us) {
    // A fixed grace period: every branch of the estimator gives it.
    c.grace_default = ns(*p.grace_us, 1e3);
    c.grace_min = c.grace_default;
    c.grace_drain_limit = nanoseconds(0);
  }
  if (p.idle_hysteresis_us) c.resume_after_idle = ns(*p.idle_hysteresis_us, 1e3);
  if (p.window_ms) c.starvation_window = ns(*p.window_ms, 1e6);
  if (p.min_share)
    c.starvation_min_run = nanoseconds(static_cast<int64_t>(
        std::llround(static_cast<double>(c.starvation_window.count()) * *p.min_share)));
  if (c.starvation_min_run >= c.starvation_window) c.starvation_min_run = c.starvation_window / 2;
  if (p.max_suspension_ms) c.max_suspension = ns(*p.max_suspension_ms, 1e6);
  if (p.hold_after_idle_us) c.hold_after_idle = ns(*p.hold_after_idle_us, 1e3);
  if (p.resume_defer_max_us) c.resume_defer_max = ns(*p.resume_defer_max_us, 1e3);
  if (p.coalesce_flaps) c.coalesce_flaps = *p.coalesce_flaps;
  return c;
}

std::vector<sched::SchedClass> scheduler_classes(sched::RequestSource trigger, const PolicyDef& p) {
  sched::SchedClass online{"online", 10, {}, std::nullopt};
  if (p.has_slo()) {
    sched::Objective o;
    if (p.slo_percentile) {
      o.percentile = *p.slo_percentile;
      o.target = std::chrono::nanoseconds(std::llround(p.slo_target_ms * 1e6));
    }
    o.ttft = p.slo_ttft;
    o.tpot = p.slo_tpot;
    o.window = std::chrono::nanoseconds(std::llround(p.slo_window_s * 1e9));
    online.objective = o;
  }
  online.triggers = {trigger};
  sched::SchedClass offline{"offline", 0, {sched::RequestSource::kHint}, std::nullopt};
  return {online, offline};
}

}  // namespace gpreempt::eval::des
