// What runs on each side of the demo: a gpreempt-workload preset (C++, hand-set kernel costs) or
// a real PyTorch model under gpreempt.sim.torch_mode (a Python process: python3 -m
// gpreempt.sim.workload). Both print the same --json documents and send the same hints to
// gpreemptd, so the scenarios do not care which one runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/child_process.h"

namespace gpreempt::demo {

enum class Side { kOnline, kOffline };

struct ModelWorkload {
  const char* name;
  Side side;
  const char* description;
  double rate_hz = 0;  // online models: the request rate of gpreempt.sim.models
};

// The models of gpreempt.sim.models (bindings/python/gpreempt/sim/models.py), in its order;
// tests/python/test_sim_workload.py checks that the two lists agree.
const std::vector<ModelWorkload>& model_workloads();
// "resnet18, resnet50, ..." for one side.
std::string model_names(Side side);
bool is_model(const std::string& name, Side side);

// The presets gpreempt-workload knows (gpreempt-workload presets --json).
std::vector<std::string> preset_names(const std::string& preset_program);

struct WorkloadPrograms {
  std::string preset_program;  // gpreempt-workload
  std::string python;          // the interpreter gpreempt's Python package was built for
};

// One side of a scenario, chosen by name (a model of `side` or a gpreempt-workload preset).
struct WorkloadSpec {
  std::string name;
  Side side = Side::kOnline;
  uint32_t batch = 0;  // models only; 0: the model's own
  bool model() const { return is_model(name, side); }
};

// The default request rate of an online side (the preset's or the model's).
double default_rate_hz(const std::string& preset_program, const std::string& name);

// How the online side tells gpreemptd about its requests.
struct Hints {
  std::string socket;   // empty: no hints (the workload unchanged)
  bool expect = false;  // early hints: expect(pre-processing time) before each request
};

// The command line of one run of `spec` for `duration_s` seconds, --json. Online: `rate_hz`
// requests per second and `hints`. Offline: run with GPREEMPT_CLASS=offline in its environment,
// which is how gpreemptd's demo config classifies it. `ready_file` (models only): the model warms
// up, creates it and waits until it is removed before the measured run.
std::vector<std::string> workload_argv(const WorkloadPrograms& programs, const WorkloadSpec& spec,
                                       double duration_s, double rate_hz, const Hints& hints,
                                       const std::string& ready_file);
// A glob matching the command line of the online side (gpreemptd's online class).
std::string online_cmdline_glob(const WorkloadSpec& spec);

// Waits until `child` has created `ready_file` (its model is warmed up). Throws gpreempt::Error
// with the child's exit code when it ends first, or when it is not ready after `timeout_s`.
void wait_until_ready(ChildProcess& child, const std::string& ready_file, double timeout_s);
// Lets a model waiting in wait_until_ready's protocol start its measured run.
void release(const std::string& ready_file);

}  // namespace gpreempt::demo
