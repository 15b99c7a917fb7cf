// The decision rule of one GPU (pure): given its members and the time, which running processes
// to suspend and which suspended ones to resume, and when the answer may next change.
//
//   * The GPU's pending priority P is the highest priority among members with work pending now
//     whose protection (slo_controller.h) is not none:
//     an open request, or an announced request inside its window [expected - expect_lead,
//     expected + expect_timeout). Every running member with priority < P is suspended — all of
//     them in one batch — unless the starvation guard holds it back, or suspends are held off
//     (failure back-off).
//   * A suspended member stays suspended while some member of higher priority has work pending or
//     ended it less than resume_after_idle ago (the hysteresis; hold_after_idle for a member whose
//     protection is hold; longer while the GPU's flaps are being coalesced, flap_coalescer.h), up
//     to max_suspension (hard bound)
//     and within the starvation guard; otherwise it is resumed.
//   So N classes nest: a middle class is suspended by the top one and suspends the bottom one.
//   * An operator hold (GpuMember::operator_until in the future) is one more reason to suspend a
//     member and keep it suspended, beside the two above: ending the hold resumes it only if no
//     pending work needs it suspended, and pending work ending leaves a held member suspended.
//     max_suspension ends a held suspension too; the starvation guard does as well unless
//     config.operator_overrides_guard (which keeps one floor: after a forced resume the member
//     runs starvation_min_run before a hold takes it again).
//   * A resume the starvation guard asks for waits while a member of a higher class has a request
//     running, at most resume_defer_max past its due time: a RESUME remaps the whole runlist and
//     so preempts the running request too. The hard bound never waits.
//   * A time slice (time_slice.h) is a third reason, for members of a listed class outside its
//     turn that have no request pending; the guard and the hard bound apply to it.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "sched/action.h"
#include "sched/arbiter_config.h"
#include "sched/gpu_member.h"

namespace gpreempt::sched {

struct PolicyDecision {
  std::vector<ProcessKey> suspend;
  SuspendReason suspend_reason = SuspendReason::kRequest;
  // The members of `suspend` that only an operator hold asks to suspend.
  std::vector<ProcessKey> by_operator;
  // Each member to resume with its reason.
  std::vector<std::pair<ProcessKey, ResumeReason>> resume;
  // When the decision may change without any event (nullopt: only an event can change it).
  std::optional<Time> next_check;
  // Starvation-guard resumes held back because a higher class's request runs (resume_defer_max).
  int deferred_resumes = 0;
};

// `gpu`: whose members these are (its own time-slice cycle, ArbiterConfig::time_slice_for).
// `hysteresis_floor`: the GPU's coalesced hysteresis (flap_coalescer.h); no member's is shorter.
PolicyDecision decide(const std::map<ProcessKey, GpuMember>& members, Time now,
                      const ArbiterConfig& config, bool suspends_allowed, GpuId gpu,
                      Duration hysteresis_floor = Duration{0});

// Whether the member has work pending at `now` (open request or expectation window), and whether
// it still counts for the idle hysteresis.
bool has_pending_work(const GpuMember& m, Time now);
bool within_hysteresis(const GpuMember& m, Time now, const ArbiterConfig& config,
                       Duration floor = Duration{0});
// How long after its last request the member keeps lower classes suspended (its protection's,
// at least `floor`).
Duration idle_hysteresis(const GpuMember& m, const ArbiterConfig& config,
                         Duration floor = Duration{0});
bool operator_held(const GpuMember& m, Time now);
// Whether the member's requests count for suspending lower classes now (its protection: none
// never, late once a request is late (late_from), per_request and hold always).
bool protects_now(const GpuMember& m, Time now);
// Under kLate, when its open requests count as late: late_after into its busy period, or for a
// class keyed on tokens when the scheduler says (GpuMember::late_at). nullopt: not as things stand.
std::optional<Time> late_from(const GpuMember& m);

}  // namespace gpreempt::sched
