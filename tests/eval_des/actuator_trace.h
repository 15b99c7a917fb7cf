// One recorded event trace replayed through lib/sched's Runtime and an actuator port — the
// daemon's (gpreemptd/actuator over the core on a fake KFD) or the DES's (eval/des/actuator over
// the GPU model) — so the test can check both carry out the same decisions and book the same
// suspensions.
//
// Trace format (text, one item per line, `#` starts a comment):
//   clock MHZ                         every GPU's clock (grace period unit)
//   gpus ID ID ...                    KFD gpu_ids, in index order
//   process PID START ID:N ID:N ...   a process (pid, start tick) and N queues on each gpu_id
//   fault ID KIND@N                   the N-th SUSPEND on gpu_id ID fails: timeout (status bit 30)
//                                     or eio
//   T_US EVENT ARGS...                an event at T_US microseconds (non-decreasing):
//     classified PID CLASS|- ID,ID    ProcessClassified (`-`: no class)
//     appeared PID ID,ID              ProcessAppeared
//     exited PID                      ProcessExited
//     start PID REQ / end PID REQ     RequestStarted / RequestFinished (hint)
//     expect PID IN_US                RequestExpected
//     kernel PID ID LENGTH_US         KernelObserved (feeds the grace estimator)
//     tick                            the clock reaches T_US (due timers fire)
//
// Actuation is asynchronous in both actuators: the replayer hands over every Suspend/Resume the
// Runtime asks for, waits until each is answered, and feeds the answers (in action order) back
// at the same trace time before taking the next item. Timers fire at the time they were armed for.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/actuator_port.h"
#include "sched/runtime.h"

namespace gpreempt::testing {

struct TraceProcess {
  sched::ProcessKey key;
  std::vector<std::pair<sched::GpuId, uint32_t>> queues;  // gpu_id, how many
};
struct TraceFault {
  sched::GpuId gpu = 0;
  std::string kind;  // "timeout" | "eio"
  uint32_t nth = 1;  // 1-based count of SUSPENDs on that GPU
};
struct TraceStep {
  sched::Time at{0};
  std::optional<sched::Event> event;  // none: a tick
  int line = 0;
};
struct ActuatorTrace {
  uint32_t clock_mhz = 0;
  std::vector<sched::GpuId> gpus;
  std::vector<TraceProcess> processes;
  std::vector<TraceFault> faults;
  std::vector<TraceStep> steps;
  const TraceProcess* process(int pid) const;
};

// Throws std::runtime_error naming `path:line` and what was expected.
ActuatorTrace load_actuator_trace(const std::string& path);

// An actuator in its world, as the replayer drives it.
class ActuatorRig : public sched::ActuatorPort {
 public:
  // A trace event, before the Runtime gets it (a rig makes an exited process gone).
  virtual void observe(const sched::Event& e) = 0;
  // Called between trace items, when nothing is in flight: the rig records the device's state.
  virtual void settled(sched::Time now) = 0;
};

class Replayer {
 public:
  Replayer(const ActuatorTrace& trace, ActuatorRig& rig);
  // Takes trace items until an action is in flight or the trace ends.
  void advance();
  // An actuator's answer; once every action in flight is answered they are fed back and the
  // replay continues.
  void completed(const sched::event::ActuationCompleted& c);
  bool done() const { return done_; }
  sched::Time now() const { return now_; }
  int in_flight() const { return in_flight_; }
  // Every Suspend/Resume the Runtime issued and every answer, as text with its time.
  const std::vector<std::string>& log() const { return log_; }
  // What the Runtime booked: suspensions and suspended time per GPU and per class, as text.
  std::vector<std::string> accounting() const;

 private:
  void feed(const sched::Event& e);
  void logged(const std::vector<sched::Action>& actions);

  const ActuatorTrace& trace_;
  ActuatorRig& rig_;
  sched::Runtime runtime_;
  std::size_t next_ = 0;
  sched::Time now_{0};
  std::optional<sched::Time> armed_;
  int in_flight_ = 0;
  std::map<uint64_t, sched::event::ActuationCompleted> answers_;
  bool done_ = false;
  std::vector<std::string> log_;
};

std::string describe(const sched::event::ActuationCompleted& c);

}  // namespace gpreempt::testing
