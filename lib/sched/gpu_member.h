// One process as one GPU's arbiter tracks it: its class, whether its queues on this GPU run, and
// the higher-priority work it has pending (its own requests and announced requests).
#pragma once

#include <optional>
#include <string>

#include "sched/objective.h"
#include "sched/process_key.h"
#include "sched/starvation_guard.h"
#include "sched/time.h"

namespace gpreempt::sched {

enum class MemberState {
  kRunning,
  kSuspending,  // a Suspend naming it is in flight
  kSuspended,
  kResuming,  // a Resume naming it is in flight
};
const char* to_string(MemberState s);

struct GpuMember {
  ProcessKey key;
  std::string class_name;
  int priority = 0;
  // What its requests get (its class's objective decides; slo_controller.h), and for kLate, how
  // long a request runs before it counts.
  Protection protection = Protection::kPerRequest;
  Duration late_after{0};
  // A class whose objective is keyed on tokens (TTFT/TPOT) is late per request, as the scheduler
  // says (late_at: when its first open request is or becomes late; request_tokens.h), not
  // late_after into its busy period.
  bool late_by_request = false;
  std::optional<Time> late_at;
  MemberState state = MemberState::kRunning;

  // Its own pending work.
  int active_requests = 0;
  std::optional<Time> busy_since;    // since when it has had a request open
  bool last_request_late = false;    // the last busy period outlasted late_after
  std::optional<Time> idle_since;    // last request (or expectation) ended
  std::optional<Time> expect_from;   // an announced request counts from here ...
  std::optional<Time> expect_until;  // ... to here, unless a real request comes first

  // An operator command holds it suspended until this time (see event::OperatorSuspend).
  std::optional<Time> operator_until;
  // Its current suspension was made for an operator command alone (accounted apart).
  bool operator_suspension = false;

  std::optional<Time> suspended_at;  // when its suspension completed
  // When an idle resume of it completed, until its next suspend judges whether that resume was a
  // flap (ArbiterConfig::coalesce_flaps).
  std::optional<Time> idle_resumed_at;
  StarvationGuard guard;
};

}  // namespace gpreempt::sched
