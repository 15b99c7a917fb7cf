#include "demo/demo_scenarios.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "common/child_process.h"
#include "common/error.h"
#include "demo/demo_daemon.h"
#include "demo/demo_workloads.h"
#include "gpreempt/gpreempt.h"
#include "sim_stats.h"

namespace gpreempt::demo {

namespace {

// The offline job gets this much longer than the online one, so that it is still running when
// the online run ends, whatever the start-up order.
constexpr double kOfflineTailS = 1.0;
// A model process imports PyTorch and runs one untimed step before it is ready: seconds on an
// idle machine, tens of seconds on a loaded one.
constexpr double kModelReadyTimeoutS = 300;

std::string secs_arg(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

nlohmann::json finish(ChildProcess& child) {
  const int rc = child.wait();
  if (rc != 0)
    throw Error(EIO, "'" + child.command_line() + "' failed with exit code " + std::to_string(rc));
  try {
    return nlohmann::json::parse(child.output());
  } catch (const nlohmann::json::exception& e) {
    throw Error(EPROTO, "'" + child.command_line() + "' printed no JSON result: " + e.what());
  }
}

// Queues appear once the workload's runtime is up; starting the online side before then would
// measure start-up, not interference. A start takes milliseconds, but seconds on a machine
// loaded by Python model processes and other work.
// (The offline side runs under /usr/bin/env, which execs the workload in place: same pid.)
void wait_for_queues(const ChildProcess& child) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + std::chrono::seconds(60);
  while (gpreempt_find_queues_by_process(child.pid(), nullptr, 0) <= 0) {
    if (steady_clock::now() > deadline)
      throw Error(ETIMEDOUT, "'" + child.command_line() + "' created no KFD queue within 60 s");
    std::this_thread::sleep_for(milliseconds(5));
  }
}

// One side of a scenario as a running process. A model (a Python process) starts its measured run
// only when go() is called, after its start-up; a preset starts it at once. Scenarios start
// models first and call go() last, so both sides measure the same stretch of time.
class RunningWorkload {
 public:
  RunningWorkload(const DemoOptions& o, const WorkloadSpec& spec, double duration_s,
                  const Hints& hints, const std::string& ready_name)
      : spec_(spec),
        ready_(spec.model() ? o.work_dir + "/" + ready_name + ".ready" : std::string()),
        child_(workload_argv({o.workload_program, o.python_program}, spec, duration_s,
                             spec.side == Side::kOnline ? o.rate_hz : 0, hints, ready_)) {
    if (spec_.model()) {
      wait_until_ready(child_, ready_, kModelReadyTimeoutS);
    } else if (spec_.side == Side::kOffline) {
      wait_for_queues(child_);
    }
  }
  void go() {
    if (!ready_.empty()) release(ready_);
  }
  ChildProcess& child() { return child_; }
  nlohmann::json finish() { return demo::finish(child_); }

 private:
  WorkloadSpec spec_;
  std::string ready_;
  ChildProcess child_;
};

DaemonReport report_of(const std::string& trigger, const nlohmann::ordered_json& status) {
  DaemonReport r;
  r.trigger = trigger;
  for (const auto& g : status.at("gpus")) {
    r.suspensions += g.at("suspensions_total").get<uint64_t>();
    r.suspended_s += g.at("suspended_s_total").get<double>();
    if (const auto a = g.find("actions"); a != g.end()) {
      r.suspend_actions += a->at("suspend").get<uint64_t>();
      r.failed_targets += a->at("failed_targets").get<uint64_t>();
      r.timed_out_targets += a->at("timed_out_targets").get<uint64_t>();
    }
  }
  r.requests_expired = status.at("daemon").at("requests_expired").get<uint64_t>();
  r.hint_to_suspend_us = status.at("daemon").at("hint_to_suspend_us");
  for (const auto& c : status.at("classes"))
    if (c.at("name") == "online") r.online_class = c.at("stats");
  return r;
}

std::vector<double> to_ms(const std::vector<double>& us) {
  std::vector<double> ms;
  for (double v : us) ms.push_back(v / 1000.0);
  return ms;
}

}  // namespace

const std::vector<std::string>& scenario_names() {
  // The evaluation's names (gpreempt-des's baselines): one vocabulary for both.
  static const std::vector<std::string> names = {
      "online-alone",  "offline-alone",  "none",
      "gpreempt-hint", "gpreempt-early", "gpreempt-transparent"};
  return names;
}

bool runs_daemon(const std::string& name) {
  return name == "gpreempt-hint" || name == "gpreempt-early" || name == "gpreempt-transparent";
}

std::vector<ScenarioResult> run_demo(const DemoOptions& o,
                                     const std::function<void(const std::string&)>& progress) {
  std::vector<ScenarioResult> results;
  const double duration = o.duration_s();
  const WorkloadSpec online{o.online_preset, Side::kOnline, o.online_batch, o.requests};
  const WorkloadSpec offline{o.offline_preset, Side::kOffline, o.offline_batch};
  const auto* online_model = find_model(o.online_preset, Side::kOnline);
  const double both = duration + kOfflineTailS + (online_model ? online_model->drain_s : 0);
  auto start_online = [&](const Hints& hints) {
    return std::make_unique<RunningWorkload>(o, online, duration, hints, "online");
  };
  auto selected = [&](const std::string& name) {
    return std::find(o.scenarios.begin(), o.scenarios.end(), name) != o.scenarios.end();
  };

  if (selected("online-alone")) {
    progress("online-alone: " + o.online_preset + ", " + std::to_string(o.requests) +
             " requests in " + secs_arg(duration) + " s");
    auto on = start_online({});
    on->go();
    results.push_back({"online-alone", on->finish(), std::nullopt, std::nullopt, std::nullopt});
  }

  if (selected("offline-alone")) {
    progress("offline-alone: " + o.offline_preset + " for " + secs_arg(duration) + " s");
    RunningWorkload off(o, offline, duration, {}, "offline");
    off.go();
    results.push_back({"offline-alone", std::nullopt, off.finish(), std::nullopt, std::nullopt});
  }

  if (selected("none")) {
    progress("none: both together, nothing done");
    const auto mark = cli::sim_stats_mark();
    std::unique_ptr<RunningWorkload> on;
    if (online.model()) on = start_online({});
    RunningWorkload off(o, offline, both, {}, "offline");
    off.go();
    if (on)
      on->go();
    else
      on = start_online({});
    auto on_result = on->finish();
    ScenarioResult r{"none", on_result, off.finish(), std::nullopt, std::nullopt};
    if (const auto sim = cli::sim_samples_since(mark); sim.available)
      r.simulated_suspends = sim.stop_us.size();
    results.push_back(r);
  }

  for (const std::string name : {"gpreempt-hint", "gpreempt-early", "gpreempt-transparent"}) {
    if (!selected(name)) continue;
    const std::string trigger = name == "gpreempt-transparent" ? "transparent" : "hint";
    progress(name + ": both together under gpreemptd (trigger " + trigger +
             (name == "gpreempt-early" ? ", the online side sends expect before pre-processing" : "") +
             ")");
    DaemonSetup setup{o.daemon_program,
                      o.work_dir,
                      name,
                      online_cmdline_glob(online),
                      trigger,
                      o.resume_after_idle_ms,
                      o.max_suspension_ms,
                      o.grace_us};
    DemoDaemon daemon(setup);
    Hints hints;
    if (trigger == "hint") hints = {daemon.socket(), name == "gpreempt-early"};

    const auto mark = cli::sim_stats_mark();
    // A model online side is started (and classified) before either side's measured run.
    std::unique_ptr<RunningWorkload> on;
    if (online.model()) {
      on = start_online(hints);
      daemon.wait_classified(on->child().pid(), "online");
    }
    RunningWorkload off(o, offline, both, {}, "offline");
    // Nothing to suspend until the daemon has classified (and attached) the offline job.
    daemon.wait_classified(off.child().pid(), "offline");
    off.go();
    if (on)
      on->go();
    else
      on = start_online(hints);
    nlohmann::json on_result;
    try {
      on_result = on->finish();
    } catch (const Error& e) {
      // A hinting workload fails when the daemon goes away: say how the daemon ended.
      const int rc = daemon.stop();
      throw Error(e.code(), std::string(e.what()) + " (gpreemptd of scenario " + name +
                                ": exit code " + std::to_string(rc) + ")");
    }
    const auto status = daemon.status();
    auto report = report_of(trigger, status);
    report.exit_code = daemon.stop();
    if (report.exit_code != 0)
      throw Error(EIO, "gpreemptd (scenario " + name + ") exited with code " +
                           std::to_string(report.exit_code) + " after SIGTERM");
    auto off_result = off.finish();
    ScenarioResult r{name, on_result, off_result, std::nullopt, std::nullopt};
    if (const auto sim = cli::sim_samples_since(mark); sim.available) {
      report.suspend_ms = to_ms(sim.stop_us);
      r.simulated_suspends = sim.stop_us.size();
    }
    r.daemon = report;
    results.push_back(r);
  }
  return results;
}

}  // namespace gpreempt::demo
