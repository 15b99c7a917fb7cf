// Every knob of the per-GPU arbitration, with its default. This struct is the ONLY place the
// defaults live: the config loader starts from it, the daemon and the discrete-event engine pass
// it on, docs/scheduler.md lists the same values.
#pragma once

#include <chrono>
#include <map>
#include <vector>

#include "sched/policy_name.h"
#include "sched/process_key.h"
#include "sched/time.h"
#include "sched/time_slice.h"

namespace gpreempt::sched {

using namespace std::chrono_literals;

struct ArbiterConfig {
  // Which policy decides (policy_name.h): gpreempt's priority rule, or none (observe only).
  PolicyName policy = PolicyName::kGpreempt;
  // Keep lower classes suspended this long after the last higher-priority request ends: every
  // suspend/resume remaps the whole runlist (online queues included), so short gaps between
  // requests must not flap.
  Duration resume_after_idle = 2ms;
  // The same hysteresis for a class whose objective needs lower classes held suspended across
  // close requests (slo_controller.h, Protection::kHold).
  Duration hold_after_idle = 20ms;
  // Flap coalescing: a request that suspends a member less than the hysteresis after an idle
  // resume of it paid two whole-runlist remaps and a CWSR save for a sliver of offline run time.
  // Each such flap doubles the GPU's hysteresis (up to hold_after_idle), so the next close pair
  // stays one suspension; each idle resume that no request follows within it halves it back.
  // Off by default: in the DES (`gpreempt eval run flap-coalescing`) the longer holds cost the
  // offline job more run time than the flaps did, and at high load they run into the starvation
  // guard, whose forced resumes leave requests unprotected (docs/evaluation.md).
  bool coalesce_flaps = false;
  // No suspension lasts longer than this, whatever the higher class still has pending.
  Duration max_suspension = 500ms;
  // A hinted request (`begin`) not ended within this is ended by gpreemptd as if its `end` had
  // come: a client that crashes mid-request or never sends `end` does not keep lower classes
  // suspended (at the starvation guard's duty cycle) for as long as its connection lives.
  Duration max_request = 10s;
  // Starvation guard: in every `starvation_window`, each suspended process runs for at least
  // `starvation_min_run` (so it is suspended at most window - min_run of it), and a process
  // resumed by the guard or the hard bound runs at least `starvation_min_run` before it is
  // suspended again.
  Duration starvation_window = 1000ms;
  Duration starvation_min_run = 100ms;
  // A resume the guard asks for while a higher class's request runs waits for that request to
  // end, at most this long (0: never waits): every RESUME unmaps and remaps the whole runlist,
  // the running request's queues included. The guard's share may come this much late.
  Duration resume_defer_max = 5ms;
  // An expected request counts as pending from `expect_lead` before its announced time (the time
  // a suspend takes to clear the GPU), and stops counting `expect_timeout` after it if the request
  // never comes.
  Duration expect_lead = 2ms;
  Duration expect_timeout = 20ms;
  // Grace period (see grace_estimator.h): with no observed kernels, `grace_default`; kernels whose
  // p90 is at most `grace_drain_limit` drain (grace = p90 * 1.25); longer ones are CWSR-saved at
  // once (`grace_min`).
  Duration grace_default = 0ns;
  Duration grace_min = 0ns;
  Duration grace_drain_limit = 200us;
  // After a suspend fails or times out on a GPU, no new suspend is tried there for this long (the
  // GPU may be resetting); other GPUs are not affected.
  Duration failure_backoff = 1000ms;
  // Operator suspensions (`gpreempt ctl suspend`) obey the starvation guard unless this is set:
  // then an operator may hold a process suspended through its guaranteed share (max_suspension
  // still ends every suspension).
  bool operator_overrides_guard = false;
  // Time-slice policy (time_slice.h): the classes that take turns on each GPU and their slices, in
  // turn order. Empty: no time slicing.
  std::vector<TimeSlice> time_slice;
  // GPUs (by KFD gpu_id) with a cycle of their own instead of `time_slice`; an empty one: no time
  // slicing on that GPU.
  std::map<GpuId, std::vector<TimeSlice>> gpu_time_slice;

  const std::vector<TimeSlice>& time_slice_for(GpuId gpu) const {
    auto it = gpu_time_slice.find(gpu);
    return it == gpu_time_slice.end() ? time_slice : it->second;
  }
};

}  // namespace gpreempt::sched
