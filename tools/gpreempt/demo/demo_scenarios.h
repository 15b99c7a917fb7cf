// The online/offline preemption demo: the same two workloads in four scenarios, so the
// interference without control and what gpreempt removes are visible side by side.
//   online_alone   the online service alone (its best case)
//   offline_alone  the offline job alone (its best case)
//   no_control     both together, nothing done: the interference
//   gpreempt       both together, the offline job suspended while online requests run
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "demo/preemption_controller.h"

namespace gpreempt::demo {

struct DemoOptions {
  double duration_s = 3;               // per scenario: the whole demo stays under half a minute
  // A gpreempt-workload preset or a model of demo_workloads.h, for each side.
  std::string online_preset = "cnn";
  std::string offline_preset = "gemm2048";
  uint32_t online_batch = 0;  // models only; 0: the model's own batch size
  uint32_t offline_batch = 0;
  std::string workload_program;        // gpreempt-workload to run
  std::string python_program;          // the interpreter for the model workloads
  ControllerOptions controller;
  std::string work_dir;                // where the controller's socket lives
};

struct ScenarioResult {
  std::string name;
  std::optional<nlohmann::json> online;   // gpreempt-workload online --json (or the model's)
  std::optional<nlohmann::json> offline;  // gpreempt-workload offline --json (or the model's)
};

struct DemoResult {
  std::vector<ScenarioResult> scenarios;
  ControllerReport preemption;            // of the gpreempt scenario
};

// Runs the four scenarios one after the other. `progress` receives one line per step.
// Throws gpreempt::Error when a workload fails (its exit code and command line in the message).
DemoResult run_demo(const DemoOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace gpreempt::demo
