// What runs on each side of the demo: a gpreempt-workload preset (C++, hand-set kernel costs) or
// a real PyTorch model under gpreempt.sim.torch_mode (a Python process: python3 -m
// gpreempt.sim.workload). Both print the same --json documents and send the same hints to
// gpreemptd, so the scenarios do not care which one runs. The LLM workloads are Python processes
// too, with their own programs and documents: an LLM server (python3 -m gpreempt.sim.serve: TTFT,
// TPOT, tokens/s) online and a fine-tuning job (python3 -m gpreempt.sim.finetune: iterations/s,
// tokens/s) offline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/child_process.h"

namespace gpreempt::demo {

enum class Side { kOnline, kOffline };

// The Python program that runs a model workload.
enum class Runner {
  kModel,     // python3 -m gpreempt.sim.workload: a gpreempt.sim.models model
  kServe,     // python3 -m gpreempt.sim.serve: the LLM server (--num-prompts at --request-rate)
  kFinetune,  // python3 -m gpreempt.sim.finetune: LLM fine-tuning for --duration
};

struct ModelWorkload {
  const char* name;
  Side side;
  const char* description;
  double rate_hz = 0;  // online models: the request rate of gpreempt.sim.models
  Runner runner = Runner::kModel;
  // Online: the requests of one scenario, by default and with --quick (0: the demo's own).
  uint64_t requests = 0;
  uint64_t quick_requests = 0;
  // Online: how long the last requests may still run after the last arrival (a server finishes
  // every request it admitted); the offline side runs this much longer than the arrivals.
  double drain_s = 0;
  // Online: whether it has host pre-processing for an early hint (expect) to announce.
  bool early_hint = true;
};

// The models of gpreempt.sim.models (bindings/python/gpreempt/sim/models.py), in its order, then
// the LLM workloads; tests/python/test_sim_workload.py checks that the first agree.
const std::vector<ModelWorkload>& model_workloads();
// The model workload called `name` on `side`, or nullptr.
const ModelWorkload* find_model(const std::string& name, Side side);
// "resnet18, resnet50, ..." for one side: the models `runner` runs (kModel: gpreempt.sim.models';
// kServe or kFinetune: the LLM workloads of that side).
std::string model_names(Side side, Runner runner = Runner::kModel);
// Every model workload of one side, LLM ones included.
std::string all_model_names(Side side);
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
  uint32_t batch = 0;     // models only; 0: the model's own
  uint64_t requests = 0;  // online: the requests an LLM server serves (the others run a duration)
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
