// The online/offline preemption demo: the same two workloads in up to six scenarios, so the
// interference without control and what each of gpreemptd's triggers removes are visible side by
// side.
//   online-alone          the online service alone (its best case)
//   offline-alone         the offline job alone (its best case)
//   none                  both together, nothing done: the interference
//   gpreempt-hint         both, under gpreemptd; the online workload sends begin/end per request
//   gpreempt-early        the same, and expect(pre-processing time) before each request's
//                         pre-processing, so the suspension can happen before it is ready
//   gpreempt-transparent  both, under gpreemptd; the online workload unchanged, the daemon
//                         watches its queues' read/write pointers
// The names are the evaluation's (gpreempt-des baselines, docs/evaluation.md): one vocabulary.
// The last three start a gpreemptd child (demo_daemon.h) and read its status at the end.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::demo {

// Every scenario, in the order they run.
const std::vector<std::string>& scenario_names();
// Whether `name` runs under gpreemptd.
bool runs_daemon(const std::string& name);

struct DemoOptions {
  uint64_t requests = 1000;  // online requests per scenario (the duration is requests / rate)
  double rate_hz = 20;       // online arrival rate (Poisson or fixed: the workload's own)
  std::vector<std::string> scenarios = scenario_names();
  // A gpreempt-workload preset or a model of demo_workloads.h, for each side.
  std::string online_preset = "cnn";
  std::string offline_preset = "gemm2048";
  uint32_t online_batch = 0;  // models only; 0: the model's own batch size
  uint32_t offline_batch = 0;
  std::string workload_program;  // gpreempt-workload to run
  std::string python_program;    // the interpreter for the model workloads
  std::string daemon_program;    // gpreemptd
  std::string work_dir;          // the daemon's config and socket, the models' ready files
  // Policy overrides written into the daemon's config; unset: the daemon's defaults.
  std::optional<double> resume_after_idle_ms;
  std::optional<double> max_suspension_ms;
  std::optional<double> grace_us;

  double duration_s() const { return static_cast<double>(requests) / rate_hz; }
};

// What gpreemptd did in one scenario (its status document at the end, and its exit).
struct DaemonReport {
  std::string trigger;
  int exit_code = 0;
  uint64_t suspensions = 0;  // target processes suspended (gpus[].suspensions_total)
  double suspended_s = 0;
  nlohmann::ordered_json hint_to_suspend_us;  // daemon-added latency, hint-caused suspends
  nlohmann::ordered_json online_class;        // the online class's stats
  // What the scheduler asked of the actuator, summed over GPUs (status gpus[].actions), and the
  // hinted requests the daemon had to end at max_request_ms: a scenario that suspended nothing
  // says here whether it tried.
  uint64_t suspend_actions = 0, failed_targets = 0, timed_out_targets = 0;
  uint64_t requests_expired = 0;
  // The simulated GPU's record of each suspend in the scenario: requested -> queues stopped.
  std::optional<std::vector<double>> suspend_ms;
};

struct ScenarioResult {
  std::string name;
  std::optional<nlohmann::json> online;   // gpreempt-workload online --json (or the model's)
  std::optional<nlohmann::json> offline;  // gpreempt-workload offline --json (or the model's)
  std::optional<DaemonReport> daemon;
  // Both sides together: the SUSPENDs the simulated GPU recorded during the scenario (nullopt off
  // the simulator) — none without control, whoever might issue one.
  std::optional<uint64_t> simulated_suspends;
};

// Runs the selected scenarios one after the other. `progress` receives one line per step.
// Throws gpreempt::Error when a workload or the daemon fails (exit code and command line in the
// message).
std::vector<ScenarioResult> run_demo(const DemoOptions& options,
                                     const std::function<void(const std::string&)>& progress);

}  // namespace gpreempt::demo
