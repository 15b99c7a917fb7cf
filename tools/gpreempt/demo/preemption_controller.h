// The demo's controller: a small program on the C ABI that follows the online client and
// suspends the offline process while online requests run.
//
// The online client (gpreempt-workload online --notify SOCKET --notify-wait) sends one line per
// request start and end (protocol: sim/workloads/notifier.h) and waits for a one-byte reply after
// each start, so the suspension happens before the request's kernels reach the GPU. Decisions are
// the policy's (lib/sched); this file only feeds it events and the clock and carries out what it
// decides through gpreempt_suspend_process / gpreempt_resume_process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpreempt/gpreempt.h"
#include "sched/preemption_policy.h"

namespace gpreempt::demo {

struct ControllerOptions {
  uint32_t grace = GPREEMPT_GRACE_DEFAULT;  // 1K-clock units, as the kernel takes it
  sched::PolicyConfig policy;
};

struct ControllerReport {
  std::vector<double> suspend_ms;   // wall-clock of each gpreempt_suspend_process call
  std::vector<double> resume_ms;    // wall-clock of each gpreempt_resume_process call
  sched::PolicyStats policy;
  uint64_t requests = 0;            // online requests seen
  std::vector<std::string> errors;  // failed calls, with the library's detail message
};

class PreemptionController {
 public:
  // `offline` stays owned by the caller and must outlive the controller.
  PreemptionController(gpreempt_target* offline, ControllerOptions options,
                       std::string socket_path);
  ~PreemptionController();
  PreemptionController(const PreemptionController&) = delete;
  PreemptionController& operator=(const PreemptionController&) = delete;

  // Binds and listens (so the online client can connect as soon as it starts), then runs the
  // event loop on its own thread. Throws gpreempt::Error if the socket cannot be set up.
  void start();
  // Ends the loop, resumes the offline process if it is still suspended, and reports.
  ControllerReport stop();

 private:
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace gpreempt::demo
