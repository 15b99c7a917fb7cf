// `gpreempt demo`: the online/offline preemption demo (demo/demo_scenarios.h). Where no AMD GPU
// is present it starts a private simulated machine (kfdsim run, GPU timing model) and runs itself
// inside it, so the same command works on a laptop and on an MI300.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "common/error.h"
#include "common/latency_summary.h"
#include "demo/demo_scenarios.h"
#include "demo/demo_workloads.h"
#include "discovery/topology.h"
#include "sim_stats.h"

namespace gpreempt::cli {

namespace {

struct DemoCliOptions {
  demo::DemoOptions demo;
  std::string profile = "mi308x";
  std::optional<uint32_t> grace;
  std::optional<uint64_t> grace_us;
  double resume_after_idle_ms = 2;
  double max_suspension_ms = 1000;
  std::vector<std::string> original_args;
};

std::filesystem::path own_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Failure("cannot find this program's directory (/proc/self/exe)");
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path();
}

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

nlohmann::json percentiles_ms(const std::vector<double>& v) { return to_json(summarize(v)); }

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(digits);
  o << v;
  return o.str();
}

nlohmann::json scenario_json(const demo::ScenarioResult& s) {
  nlohmann::json j{{"name", s.name}};
  if (s.online) {
    const auto& l = (*s.online)["latency_ms"];
    j["online_latency_ms"] = l;
  }
  if (s.offline) j["offline_iterations_per_s"] = (*s.offline)["iterations_per_s"];
  return j;
}

std::string human(const nlohmann::json& j) {
  std::ostringstream out;
  out << "gpreempt demo on " << j["machine"]["description"].get<std::string>() << "\n"
      << "online: " << j["online_preset"].get<std::string>()
      << ", offline: " << j["offline_preset"].get<std::string>() << ", "
      << j["duration_s"].get<double>() << " s per scenario\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : j["scenarios"]) {
    std::vector<std::string> r{s["name"]};
    if (s.contains("online_latency_ms")) {
      for (const char* k : {"p50", "p95", "p99"})
        r.push_back(fixed(s["online_latency_ms"][k].get<double>(), 2));
    } else {
      r.insert(r.end(), {"-", "-", "-"});
    }
    r.push_back(s.contains("offline_iterations_per_s")
                    ? fixed(s["offline_iterations_per_s"].get<double>(), 1)
                    : "-");
    rows.push_back(r);
  }
  out << table({"scenario", "online P50 ms", "P95 ms", "P99 ms", "offline it/s"}, rows) << "\n";
  const auto& p = j["preemption"];
  out << "preemption (gpreempt scenario): " << p["count"].get<uint64_t>() << " suspensions for "
      << p["online_requests"].get<uint64_t>() << " online requests\n";
  auto line = [&](const std::string& name, const nlohmann::json& s, const char* unit, double scale) {
    if (s.is_null() || s["count"].get<uint64_t>() == 0) return;
    out << "  " << name << "  p50 " << fixed(s["p50"].get<double>() * scale, 3) << "  p95 "
        << fixed(s["p95"].get<double>() * scale, 3) << "  p99 "
        << fixed(s["p99"].get<double>() * scale, 3) << "  max "
        << fixed(s["max"].get<double>() * scale, 3) << " " << unit << "\n";
  };
  line("suspend call (wall clock)     ", p["suspend_ms"], "ms", 1);
  line("resume call (wall clock)      ", p["resume_ms"], "ms", 1);
  if (!p["simulated"].is_null()) {
    line("simulated: queues stopped     ", p["simulated"]["stop_ms"], "ms", 1);
    line("simulated: suspend round trip ", p["simulated"]["suspend_round_trip_ms"], "ms", 1);
    line("simulated: resume round trip  ", p["simulated"]["resume_round_trip_ms"], "ms", 1);
  }
  for (const auto& e : p["errors"]) out << "  error: " << e.get<std::string>() << "\n";
  return out.str();
}

std::vector<double> to_ms(const std::vector<double>& us) {
  std::vector<double> ms;
  for (double v : us) ms.push_back(v / 1000.0);
  return ms;
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
  if (demo::is_model(name, side)) return;
  if (batch > 0)
    throw UsageError(flag + "-batch applies to the model workloads only, not to preset '" + name +
                     "'");
  const auto presets = demo::preset_names(preset_program);
  for (const auto& p : presets)
    if (p == name) return;
  throw UsageError("unknown " + flag + " workload '" + name + "'; models: " +
                   demo::model_names(side) + "; gpreempt-workload presets: " + join(presets));
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

void run(const Globals& g, DemoCliOptions& o) {
  if (o.demo.duration_s <= 0) throw UsageError("--duration must be positive");
  const auto dir = own_dir();
  o.demo.workload_program = (dir / "gpreempt-workload").string();
  if (::access(o.demo.workload_program.c_str(), X_OK) != 0)
    throw Failure("the demo's workload program is missing: " + o.demo.workload_program);
  check_workload("--online", o.demo.online_preset, demo::Side::kOnline, o.demo.online_batch,
                 o.demo.workload_program);
  check_workload("--offline", o.demo.offline_preset, demo::Side::kOffline, o.demo.offline_batch,
                 o.demo.workload_program);
  if (::access("/dev/kfd", F_OK) != 0) reexec_on_simulator(o);
  const bool simulated = std::getenv("KFDSIM_DIR") != nullptr;
  o.demo.python_program = GPREEMPT_DEMO_PYTHON;
  point_python_at_our_package(dir);

  nlohmann::json gpus = nlohmann::json::array();
  std::string description;
  for (const auto& gpu : discovery::read_gpu_nodes(discovery::kTopologyRoot)) {
    gpus.push_back({{"gpu_id", gpu.gpu_id}, {"name", gpu.name}});
    if (description.empty()) {
      // The topology's name is the ASIC string ("ip discovery" on MI300s); the target says more.
      description = gpu.gfx_name() + " GPU";
      if (!gpu.name.empty()) description += " '" + gpu.name + "'";
      if (gpu.max_engine_clk_fcompute > 0 && !o.grace && o.grace_us)
        o.grace = gpreempt_grace_from_us(*o.grace_us, gpu.max_engine_clk_fcompute);
    }
  }
  if (gpus.empty()) throw Failure("the KFD topology lists no GPU");
  if (o.grace_us && !o.grace) throw Failure("cannot convert --grace-us: the GPU's clock is unknown");
  o.demo.controller.grace = o.grace.value_or(GPREEMPT_GRACE_DEFAULT);
  description = (simulated ? "a simulated " : "") + description + " (" +
                std::to_string(gpus.size()) + " GPU" + (gpus.size() > 1 ? "s" : "") + ")";
  o.demo.controller.policy.resume_after_idle =
      std::chrono::duration_cast<sched::Time>(std::chrono::duration<double, std::milli>(o.resume_after_idle_ms));
  o.demo.controller.policy.max_suspension =
      std::chrono::duration_cast<sched::Time>(std::chrono::duration<double, std::milli>(o.max_suspension_ms));

  char tmpl[] = "/tmp/gpreempt-demo-XXXXXX";
  if (!::mkdtemp(tmpl)) throw Failure(std::string("mkdtemp: ") + errno_text(errno));
  o.demo.work_dir = tmpl;

  const auto mark = sim_stats_mark();
  demo::DemoResult r;
  try {
    r = demo::run_demo(o.demo, [&](const std::string& step) {
      if (!g.json) std::cerr << "... " << step << std::endl;
    });
  } catch (...) {
    std::filesystem::remove_all(o.demo.work_dir);
    throw;
  }
  std::filesystem::remove_all(o.demo.work_dir);
  const auto sim = sim_samples_since(mark);

  nlohmann::json j{{"machine", {{"simulated", simulated}, {"description", description}, {"gpus", gpus}}},
                   {"duration_s", o.demo.duration_s},
                   {"online_preset", o.demo.online_preset},
                   {"offline_preset", o.demo.offline_preset},
                   {"grace_units", o.demo.controller.grace}};
  j["scenarios"] = nlohmann::json::array();
  for (const auto& s : r.scenarios) j["scenarios"].push_back(scenario_json(s));
  const auto& p = r.preemption;
  j["preemption"] = {{"count", p.policy.suspends},
                     {"online_requests", p.requests},
                     {"suspend_ms", percentiles_ms(p.suspend_ms)},
                     {"resume_ms", percentiles_ms(p.resume_ms)},
                     {"policy",
                      {{"suspends", p.policy.suspends},
                       {"resumes", p.policy.resumes},
                       {"failed_suspends", p.policy.failed_suspends},
                       {"failed_resumes", p.policy.failed_resumes},
                       {"forced_resumes", p.policy.forced_resumes},
                       {"suspended_total_ms",
                        json_conventions::round_ms(
                            std::chrono::duration<double, std::milli>(p.policy.suspended_total).count())}}},
                     {"errors", p.errors},
                     {"simulated", nullptr}};
  if (sim.available)
    j["preemption"]["simulated"] = {{"stop_ms", percentiles_ms(to_ms(sim.stop_us))},
                                    {"suspend_round_trip_ms", percentiles_ms(to_ms(sim.suspend_round_trip_us))},
                                    {"resume_round_trip_ms", percentiles_ms(to_ms(sim.resume_round_trip_us))}};
  if (!p.errors.empty()) {
    Failure f("the demo ran, but " + std::to_string(p.errors.size()) +
              " preemption call(s) failed (see \"errors\")");
    // With --json the result goes out once, as the failure document's detail.
    if (g.json) {
      f.detail = j;
      throw f;
    }
    emit(g, human(j), j);
    throw f;
  }
  emit(g, human(j), j);
}

}  // namespace

void register_demo_commands(CLI::App& app, Globals& globals) {
  auto o = std::make_shared<DemoCliOptions>();
  CLI::App* cmd = add_command(
      app, globals, "demo",
      "Online/offline preemption demo: online latency and offline throughput alone, together "
      "without control, and together with gpreempt",
      "Runs four scenarios of --duration seconds each:\n"
      "  online_alone, offline_alone, no_control (both, nothing done), gpreempt (both; the\n"
      "  offline process is suspended while online requests run, resumed when idle).\n"
      "Without an AMD GPU (/dev/kfd absent) it runs itself on a simulated machine:\n"
      "  kfdsim run --profile PROFILE --hardware gpu -- gpreempt demo ...\n"
      "Examples:\n"
      "  gpreempt demo --duration 5\n"
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
          "Grace periods are in 1,000 GPU clocks (--grace) or converted from microseconds at the\n"
          "GPU's clock (--grace-us).");
  cmd->add_option("--duration", o->demo.duration_s, "seconds per scenario")->capture_default_str();
  cmd->add_option("--profile", o->profile,
                  "simulated device profile when no GPU is present (mi308x, mi300x, mi210)")
      ->capture_default_str();
  cmd->add_option("--online", o->demo.online_preset, "online workload: preset or model")
      ->capture_default_str();
  cmd->add_option("--offline", o->demo.offline_preset, "offline workload: preset or model")
      ->capture_default_str();
  cmd->add_option("--online-batch", o->demo.online_batch,
                  "batch size of an online model (default: the model's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--offline-batch", o->demo.offline_batch,
                  "batch size of an offline model (default: the model's)")
      ->check(CLI::PositiveNumber);
  auto* grace = cmd->add_option("--grace", o->grace, "grace period in 1,000 GPU clocks (default: driver's)");
  cmd->add_option("--grace-us", o->grace_us, "grace period in microseconds at the GPU's clock")
      ->excludes(grace);
  cmd->add_option("--resume-after-idle-ms", o->resume_after_idle_ms,
                  "resume the offline job once the online side has been idle this long")
      ->capture_default_str();
  cmd->add_option("--max-suspension-ms", o->max_suspension_ms,
                  "never keep the offline job suspended longer than this at a stretch")
      ->capture_default_str();
  cmd->callback([o, &globals] {
    // The same command again, for the re-run on the simulator.
    auto& a = o->original_args;
    a = {"demo", "--duration", std::to_string(o->demo.duration_s), "--profile", o->profile,
         "--online", o->demo.online_preset, "--offline", o->demo.offline_preset,
         "--resume-after-idle-ms", std::to_string(o->resume_after_idle_ms),
         "--max-suspension-ms", std::to_string(o->max_suspension_ms)};
    if (o->demo.online_batch)
      a.insert(a.end(), {"--online-batch", std::to_string(o->demo.online_batch)});
    if (o->demo.offline_batch)
      a.insert(a.end(), {"--offline-batch", std::to_string(o->demo.offline_batch)});
    if (o->grace) a.insert(a.end(), {"--grace", std::to_string(*o->grace)});
    if (o->grace_us) a.insert(a.end(), {"--grace-us", std::to_string(*o->grace_us)});
    if (globals.json) a.push_back("--json");
    run(globals, *o);
  });
}

}  // namespace gpreempt::cli
