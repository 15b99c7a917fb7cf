// `gpreempt demo`: the online/offline preemption demo (demo/demo_scenarios.h), its preemption
// scenarios run through a gpreemptd child. Where no AMD GPU is present it starts a private
// simulated machine (kfdsim run, GPU timing model) and runs itself inside it, so the same command
// works on a laptop and on an MI300.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "cli.h"
#include "common/error.h"
#include "demo/demo_report.h"
#include "demo/demo_scenarios.h"
#include "demo/demo_workloads.h"
#include "discovery/product_name.h"
#include "discovery/topology.h"

namespace gpreempt::cli {

namespace {

struct DemoCliOptions {
  demo::DemoOptions demo;
  std::string profile = "mi308x";
  std::optional<uint64_t> requests;
  bool quick = false;
  std::optional<double> rate;
  std::optional<std::string> scenarios;  // comma-separated; unset: all
  std::string gpreemptd;  // empty: next to gpreempt, else ../sbin
  std::vector<std::string> original_args;
};

// --quick: enough requests for every scenario to show its effect, in seconds (the test suite's
// runs); the documented run keeps the default, which makes P99 more than the maximum.
constexpr uint64_t kQuickRequests = 60;
constexpr uint64_t kDefaultRequests = 1000;

// No KFD here: run this very command again on a private simulated machine with the GPU model.
[[noreturn]] void reexec_on_simulator(const DemoCliOptions& o) {
  if (std::getenv("KFDSIM_DIR"))
    throw Failure("running under kfdsim but /dev/kfd is not visible: is the shim (LD_PRELOAD) lost?");
  const auto dir = own_dir();
  const std::string kfdsim = (dir / "kfdsim").string();
  if (::access(kfdsim.c_str(), X_OK) != 0)
    throw Failure("no /dev/kfd on this machine and no simulator next to gpreempt (" + kfdsim +
                  "): build the project (scripts/build.sh) or run on an AMD GPU");
  std::vector<std::string> args = {kfdsim, "run", "--profile", o.profile, "--hardware", "gpu",
                                   "--", (dir / "gpreempt").string()};
  args.insert(args.end(), o.original_args.begin(), o.original_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cerr << "gpreempt demo: no AMD GPU here; running on a simulated " << o.profile
            << " (kfdsim run --profile " << o.profile << " --hardware gpu)\n";
  std::cerr.flush();
  std::fflush(stdout);
  ::execv(argv[0], argv.data());
  throw Failure("cannot run " + kfdsim + ": " + errno_text(errno));
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Each side is a model of its side or a gpreempt-workload preset; anything else is a usage error
// that lists both, before any simulated machine starts.
void check_workload(const std::string& flag, const std::string& name, demo::Side side,
                    uint32_t batch, const std::string& preset_program) {
  const bool online = side == demo::Side::kOnline;
  if (const auto* m = demo::find_model(name, side)) {
    if (batch > 0 && m->runner == demo::Runner::kServe)
      throw UsageError(flag + "-batch does not apply to " + name +
                       ": the server forms its batches itself, from the requests it is serving");
    return;
  }
  // A model of the other side: say so, rather than list what this side knows.
  if (demo::is_model(name, online ? demo::Side::kOffline : demo::Side::kOnline))
    throw UsageError("'" + name + "' is an " + (online ? "offline" : "online") +
                     " workload: give it as " + (online ? "--offline" : "--online") + "; " + flag +
                     " models are " + demo::all_model_names(side));
  if (batch > 0)
    throw UsageError(flag + "-batch applies to the model workloads only, not to preset '" + name +
                     "'");
  const auto presets = demo::preset_names(preset_program);
  for (const auto& p : presets)
    if (p == name) return;
  throw UsageError("unknown " + flag + " workload '" + name + "'; models: " +
                   demo::all_model_names(side) + "; gpreempt-workload presets: " + join(presets));
}

// The model workloads import the gpreempt package: from the build tree next to this program when
// there is one (build/bin/gpreempt -> build/python), else where the interpreter finds it.
void point_python_at_our_package(const std::filesystem::path& dir) {
  const auto pkg = dir.parent_path() / "python";
  if (!std::filesystem::exists(pkg / "gpreempt" / "__init__.py")) return;
  std::string path = pkg.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  ::setenv("PYTHONPATH", path.c_str(), 1);
}

// gpreemptd beside this program (the build tree's bin/), else in the installed layout's sbin/.
std::string find_gpreemptd(const std::filesystem::path& dir) {
  for (const auto& p : {dir / "gpreemptd", dir.parent_path() / "sbin" / "gpreemptd"})
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  return (dir / "gpreemptd").string();
}

// gpreempt-early announces a request's host pre-processing before it starts: an online side without
// any (the LLM server) has nothing to announce, so it runs without that scenario.
bool has_early_hint(const std::string& online) {
  const auto* m = demo::find_model(online, demo::Side::kOnline);
  return !m || m->early_hint;
}

// The demo's names before it took the evaluation's: refused with the new name.
const std::map<std::string, std::string> kOldScenarioNames = {
    {"online_alone", "online-alone"}, {"offline_alone", "offline-alone"},
    {"no_control", "none"},           {"hint", "gpreempt-hint"},
    {"early_hint", "gpreempt-early"}, {"transparent", "gpreempt-transparent"}};

std::vector<std::string> split_scenarios(const std::optional<std::string>& given,
                                         const std::string& online) {
  if (!given) {
    auto all = demo::scenario_names();
    if (!has_early_hint(online)) all.erase(std::find(all.begin(), all.end(), "gpreempt-early"));
    return all;
  }
  const std::string& list = *given;
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    const auto& all = demo::scenario_names();
    if (auto old = kOldScenarioNames.find(name); old != kOldScenarioNames.end())
      throw UsageError("scenario '" + name + "' is now called '" + old->second +
                       "' (the evaluation's name for it)");
    if (std::find(all.begin(), all.end(), name) == all.end())
      throw UsageError("unknown scenario '" + name + "' in --scenarios; known: " + join(all));
    if (name == "gpreempt-early" && !has_early_hint(online))
      throw UsageError("scenario gpreempt-early needs an online side with host pre-processing to "
                       "announce; " + online + " has none (its other scenarios run)");
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  if (out.empty()) throw UsageError("--scenarios lists no scenario");
  // They run in their fixed order, whatever the order given.
  std::vector<std::string> ordered;
  for (const auto& n : demo::scenario_names())
    if (std::find(out.begin(), out.end(), n) != out.end()) ordered.push_back(n);
  return ordered;
}

void run(const Globals& g, DemoCliOptions& o) {
  o.demo.scenarios = split_scenarios(o.scenarios, o.demo.online_preset);
  // An LLM server's requests take seconds each: it has its own counts (demo_workloads.cpp).
  uint64_t requests = o.quick ? kQuickRequests : kDefaultRequests;
  if (const auto* m = demo::find_model(o.demo.online_preset, demo::Side::kOnline)) {
    const uint64_t own = o.quick ? m->quick_requests : m->requests;
    if (own > 0) requests = own;
  }
  o.demo.requests = o.requests.value_or(requests);
  const auto dir = own_dir();
  o.demo.workload_program = (dir / "gpreempt-workload").string();
  if (::access(o.demo.workload_program.c_str(), X_OK) != 0)
    throw Failure("the demo's workload program is missing: " + o.demo.workload_program);
  check_workload("--online", o.demo.online_preset, demo::Side::kOnline, o.demo.online_batch,
                 o.demo.workload_program);
  check_workload("--offline", o.demo.offline_preset, demo::Side::kOffline, o.demo.offline_batch,
                 o.demo.workload_program);
  const bool needs_daemon =
      std::any_of(o.demo.scenarios.begin(), o.demo.scenarios.end(), demo::runs_daemon);
  o.demo.daemon_program = o.gpreemptd.empty() ? find_gpreemptd(dir) : o.gpreemptd;
  if (needs_daemon && ::access(o.demo.daemon_program.c_str(), X_OK) != 0)
    throw Failure(
        "the demo runs its preemption scenarios through gpreemptd, and there is no "
        "executable " +
        o.demo.daemon_program + " (" + errno_text(errno) +
        "): build it (cmake --build build --target gpreemptd), pass --gpreemptd PATH, "
        "or run only --scenarios online-alone,offline-alone,none");
  if (::access("/dev/kfd", F_OK) != 0) reexec_on_simulator(o);
  const bool simulated = std::getenv("KFDSIM_DIR") != nullptr;
  o.demo.python_program = GPREEMPT_DEMO_PYTHON;
  point_python_at_our_package(dir);
  o.demo.rate_hz =
      o.rate.value_or(demo::default_rate_hz(o.demo.workload_program, o.demo.online_preset));

  nlohmann::json gpus = nlohmann::json::array();
  std::string description;
  for (auto gpu : discovery::read_gpu_nodes(discovery::kTopologyRoot)) {
    // The sysfs name file ends in a newline.
    while (!gpu.name.empty() && std::isspace(static_cast<unsigned char>(gpu.name.back())))
      gpu.name.pop_back();
    const auto product = discovery::product_name(gpu.gfx_target_version, gpu.device_id);
    gpus.push_back({{"gpu_id", gpu.gpu_id},
                    {"name", gpu.name},
                    {"product", product ? nlohmann::json(product->name) : nlohmann::json()}});
    // The topology's name is the ASIC string ("ip discovery" on every MI300): what a person
    // knows the GPU by comes from its PCI device id, as in `gpreempt info`.
    if (description.empty()) description = discovery::display_name(gpu.gfx_target_version, gpu.device_id);
  }
  if (gpus.empty()) throw Failure("the KFD topology lists no GPU");
  description = (simulated ? "a simulated " : "") + description + ", " + std::to_string(gpus.size()) +
                " GPU" + (gpus.size() > 1 ? "s" : "");

  char tmpl[] = "/tmp/gpreempt-demo-XXXXXX";
  if (!::mkdtemp(tmpl)) throw Failure(std::string("mkdtemp: ") + errno_text(errno));
  o.demo.work_dir = tmpl;

  std::vector<demo::ScenarioResult> r;
  try {
    r = demo::run_demo(o.demo, [&](const std::string& step) {
      if (!g.json) std::cerr << "... " << step << std::endl;
    });
  } catch (...) {
    std::filesystem::remove_all(o.demo.work_dir);
    throw;
  }
  std::filesystem::remove_all(o.demo.work_dir);

  nlohmann::json j{
      {"machine", {{"simulated", simulated}, {"description", description}, {"gpus", gpus}}},
      {"requests", o.demo.requests},
      {"rate_hz", o.demo.rate_hz},
      {"duration_s", o.demo.duration_s()},
      {"online_preset", o.demo.online_preset},
      {"offline_preset", o.demo.offline_preset}};
  j["scenarios"] = nlohmann::json::array();
  for (const auto& s : r) j["scenarios"].push_back(demo::scenario_json(s));
  emit(g, demo::human_report(j), j);
}

}  // namespace

void register_demo_commands(CLI::App& app, Globals& globals) {
  auto o = std::make_shared<DemoCliOptions>();
  CLI::App* cmd = add_command(
      app, globals, "demo",
      "Online/offline preemption demo: online latency and offline throughput alone, together "
      "without control, and together under gpreemptd with each of its triggers",
      "Runs these scenarios (--scenarios picks some), each for --requests online requests:\n"
      "  online-alone, offline-alone, none (both, nothing done),\n"
      "  gpreempt-hint (both under gpreemptd; the online workload sends begin/end per request),\n"
      "  gpreempt-early (also expect(N us) before each request's pre-processing),\n"
      "  gpreempt-transparent (the online workload unchanged; gpreemptd polls its queues'\n"
      "  pointers). The names are gpreempt eval's and gpreempt-des's.\n"
      "The last three start a gpreemptd child with a config written into the demo's work dir\n"
      "(its own socket; class online: the online workload's command line, with the trigger;\n"
      "class offline: GPREEMPT_CLASS=offline in the offline workload's environment), read its\n"
      "status at the end and stop it with SIGTERM. Every policy number is gpreemptd's default\n"
      "(docs/scheduler.md) unless overridden below.\n"
      "Without an AMD GPU (/dev/kfd absent) it runs itself on a simulated machine:\n"
      "  kfdsim run --profile PROFILE --hardware gpu -- gpreempt demo ...\n"
      "Examples:\n"
      "  gpreempt demo                                   (1000 requests per scenario)\n"
      "  gpreempt demo --quick --scenarios none,gpreempt-hint\n"
      "  gpreempt demo --online transformer --offline gemm2048 --grace-us 100 --json\n"
      "  gpreempt demo --online resnet18 --offline resnet50-train\n"
      "  gpreempt demo --online linear512 --offline linear1024-train --offline-batch 32\n"
      "Workloads: a gpreempt-workload preset (hand-set kernel costs; gpreempt-workload presets)\n"
      "or a PyTorch model on the simulated GPU (" GPREEMPT_DEMO_PYTHON
      " -m gpreempt.sim.workload,\n"
      "random weights; start-up takes seconds, not counted):\n"
      "  online models:  " +
          demo::model_names(demo::Side::kOnline) +
          "\n"
          "  offline models: " +
          demo::model_names(demo::Side::kOffline) +
          "\n"
          "or an LLM workload (llama-1b, random weights; docs/llm.md):\n"
          "  online LLM:  " +
          demo::model_names(demo::Side::kOnline, demo::Runner::kServe) +
          " (-m gpreempt.sim.serve: continuous batching; TTFT, TPOT, output tokens/s)\n"
          "  offline LLM: " +
          demo::model_names(demo::Side::kOffline, demo::Runner::kFinetune) +
          " (-m gpreempt.sim.finetune: full fine-tuning, AdamW, 4 x 1024 tokens per step;\n"
          "               iterations/s and tokens/s)\n"
          "With --online llm-serve a scenario is 50 requests (--quick 10) at 1 req/s, each a\n"
          "1024-token prompt and 128 output tokens, and lasts about a minute with start-up (the\n"
          "five scenarios about 6 min); gpreempt-early does not run (the server has no host\n"
          "pre-processing to announce), and the offline side runs 5 s past the last arrival so the\n"
          "last requests still meet it. Both LLM sides also pair with the other workloads, e.g.\n"
          "  gpreempt demo --online llm-serve --offline llm-finetune\n"
          "  gpreempt demo --online llm-serve --offline resnet50-train --quick\n");
  auto* requests = cmd->add_option("--requests", o->requests,
                                   "online requests per scenario (default " +
                                       std::to_string(kDefaultRequests) + "; llm-serve: 50)")
                       ->check(CLI::PositiveNumber);
  cmd->add_flag("--quick", o->quick,
                std::to_string(kQuickRequests) +
                    " requests per scenario (llm-serve: 10), a fast check")
      ->excludes(requests);
  cmd->add_option("--rate", o->rate, "online requests per second (default: the online side's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
      "--scenarios", o->scenarios,
      "comma-separated scenarios to run (default: all): " + join(demo::scenario_names()));
  cmd->add_option("--profile", o->profile,
                  "simulated device profile when no GPU is present (mi308x, mi300x, mi210)")
      ->capture_default_str();
  cmd->add_option("--online", o->demo.online_preset, "online workload: preset or model")
      ->capture_default_str();
  cmd->add_option("--offline", o->demo.offline_preset, "offline workload: preset or model")
      ->capture_default_str();
  cmd->add_option("--online-batch", o->demo.online_batch,
                  "batch size of an online model (default: the model's; not llm-serve, whose "
                  "server forms its batches)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--offline-batch", o->demo.offline_batch,
                  "batch size of an offline model (default: the model's; llm-finetune: "
                  "sequences of 1024 tokens per step, default 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gpreemptd", o->gpreemptd,
                  "the gpreemptd program (default: beside gpreempt, else ../sbin/gpreemptd)");
  cmd->add_option("--grace-us", o->demo.grace_us,
                  "gpreemptd's [policy] grace_default_us (default: the daemon's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--resume-after-idle-ms", o->demo.resume_after_idle_ms,
                  "gpreemptd's [policy] resume_after_idle_ms (default: the daemon's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-suspension-ms", o->demo.max_suspension_ms,
                  "gpreemptd's [policy] max_suspension_ms (default: the daemon's)")
      ->check(CLI::PositiveNumber);
  cmd->callback([o, &globals] {
    // The same command again, for the re-run on the simulator.
    auto& a = o->original_args;
    a = {"demo",      "--profile",           o->profile, "--online", o->demo.online_preset,
         "--offline", o->demo.offline_preset};
    auto num = [](double v) {
      std::ostringstream s;
      s.precision(17);
      s << v;
      return s.str();
    };
    if (o->requests) a.insert(a.end(), {"--requests", std::to_string(*o->requests)});
    if (o->quick) a.push_back("--quick");
    if (o->rate) a.insert(a.end(), {"--rate", num(*o->rate)});
    if (o->scenarios) a.insert(a.end(), {"--scenarios", *o->scenarios});
    if (!o->gpreemptd.empty()) a.insert(a.end(), {"--gpreemptd", o->gpreemptd});
    if (o->demo.online_batch)
      a.insert(a.end(), {"--online-batch", std::to_string(o->demo.online_batch)});
    if (o->demo.offline_batch)
      a.insert(a.end(), {"--offline-batch", std::to_string(o->demo.offline_batch)});
    if (o->demo.grace_us) a.insert(a.end(), {"--grace-us", num(*o->demo.grace_us)});
    if (o->demo.resume_after_idle_ms)
      a.insert(a.end(), {"--resume-after-idle-ms", num(*o->demo.resume_after_idle_ms)});
    if (o->demo.max_suspension_ms)
      a.insert(a.end(), {"--max-suspension-ms", num(*o->demo.max_suspension_ms)});
    if (globals.json) a.push_back("--json");
    run(globals, *o);
  });
}

}  // namespace gpreempt::cli
