// `gpreempt bench preempt`: the latency of the suspend/resume path as a caller sees it (control
// thread hop + snapshot refresh + ioctl), and — on the simulator — the simulated preemption
// latency the GPU model recorded for the same runlist updates.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli.h"
#include "common/error.h"
#include "session_options.h"
#include "target_check.h"
#include "sim_stats.h"
#include "common/latency_summary.h"

namespace gpreempt::cli {

namespace {

struct BenchOptions {
  SessionOptions session;
  std::vector<std::string> queues;
  GraceOptions grace;
  unsigned cycles = 100;
  unsigned hold_us = 0;
  unsigned gap_us = 0;
};

struct Summary {
  nlohmann::json json;
  // "<name> <p50> <p95> <p99> <max> <mean>" in fixed-width columns under kHeader.
  std::string row(const std::string& name) const {
    char buf[160];
    auto v = [&](const char* k) { return json.is_object() ? json.value(k, 0.0) : 0.0; };
    std::snprintf(buf, sizeof buf, "%-22s %9.1f %9.1f %9.1f %9.1f %9.1f", name.c_str(), v("p50"),
                  v("p95"), v("p99"), v("max"), v("mean"));
    return buf;
  }
};
constexpr const char* kHeader = "                             p50       p95       p99       max      mean\n";

// The summary of `v` (microseconds) with the project's one percentile definition; null when there
// is nothing to summarise.
nlohmann::json percentiles(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  return to_json(summarize(v));
}

void run_bench(const Globals& g, const BenchOptions& o) {
  if (o.cycles == 0) throw UsageError("--cycles must be at least 1");
  std::optional<std::vector<uint32_t>> ids;
  if (!o.queues.empty()) ids = parse_queue_ids(o.queues);
  const int pid = o.session.pid;
  auto ctx = open_context(o.session);  // the KFD version gate speaks first
  require_gpu_queues(pid);
  ctx->attach(pid);
  std::vector<kfd::QueueInfo> infos;
  for (const auto& q : ctx->queues(pid)) infos.push_back(q.info);
  if (infos.empty()) throw no_queues_failure(pid);
  uint32_t clock_mhz = 0;
  const uint32_t grace = resolve_grace(o.grace, infos, &clock_mhz);

  const auto mark = sim_stats_mark();

  std::vector<double> s_wall, s_hop, s_ioctl, r_wall, r_hop, r_ioctl;
  unsigned incomplete = 0;
  for (unsigned i = 0; i < o.cycles; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto s = ctx->suspend(pid, ids, grace);
    auto t1 = std::chrono::steady_clock::now();
    if (!s.result.all_done()) ++incomplete;
    if (o.hold_us) std::this_thread::sleep_for(std::chrono::microseconds(o.hold_us));
    auto t2 = std::chrono::steady_clock::now();
    auto r = ctx->resume(pid, ids);
    auto t3 = std::chrono::steady_clock::now();
    s_wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    r_wall.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
    s_hop.push_back(s.timing.hop_ns / 1000.0);
    r_hop.push_back(r.timing.hop_ns / 1000.0);
    s_ioctl.push_back(s.timing.ioctl_ns / 1000.0);
    r_ioctl.push_back(r.timing.ioctl_ns / 1000.0);
    if (o.gap_us) std::this_thread::sleep_for(std::chrono::microseconds(o.gap_us));
  }
  ctx->detach(pid);

  nlohmann::json j{{"pid", pid},
                   {"cycles", o.cycles},
                   {"queue_ids", ids ? nlohmann::json(*ids) : nlohmann::json(nullptr)},
                   {"grace_units", grace},
                   {"incomplete_suspends", incomplete}};
  j["suspend"] = {{"wall_us", percentiles(s_wall)}, {"hop_us", percentiles(s_hop)},
                  {"ioctl_us", percentiles(s_ioctl)}};
  j["resume"] = {{"wall_us", percentiles(r_wall)}, {"hop_us", percentiles(r_hop)},
                 {"ioctl_us", percentiles(r_ioctl)}};

  // Simulated device: the GPU model's own record of each runlist update we caused.
  j["simulated"] = nullptr;
  const auto sim = sim_samples_since(mark);
  const auto& sim_stop = sim.stop_us;
  const auto& sim_suspend_rt = sim.suspend_round_trip_us;
  const auto& sim_resume = sim.resume_round_trip_us;
  if (sim.available) {
    j["simulated"] = {{"source", "kfdsim stats at " + sim_machine_socket()},
                      {"suspend_stop_latency_us", percentiles(sim_stop)},
                      {"suspend_runlist_round_trip_us", percentiles(sim_suspend_rt)},
                      {"resume_runlist_round_trip_us", percentiles(sim_resume)}};
  }

  std::ostringstream out;
  out << "preemption bench: process " << pid << ", " << o.cycles << " suspend/resume cycles of "
      << (ids ? std::to_string(ids->size()) : std::string("all")) << " queue(s), grace "
      << (grace == kfd::KFD_USE_DEFAULT_GRACE_PERIOD ? std::string("driver default")
                                                     : std::to_string(grace) + " x 1K clocks")
      << "\n\nwall-clock latency, microseconds:\n"
      << kHeader
      << Summary{j["suspend"]["wall_us"]}.row("suspend (caller)") << "\n"
      << Summary{j["suspend"]["hop_us"]}.row("  hop to ctl thread") << "\n"
      << Summary{j["suspend"]["ioctl_us"]}.row("  SUSPEND ioctl") << "\n"
      << Summary{j["resume"]["wall_us"]}.row("resume (caller)") << "\n"
      << Summary{j["resume"]["hop_us"]}.row("  hop to ctl thread") << "\n"
      << Summary{j["resume"]["ioctl_us"]}.row("  RESUME ioctl") << "\n";
  if (!j["simulated"].is_null()) {
    out << "\nsimulated GPU (model time, microseconds):\n" << kHeader;
    if (!sim_stop.empty())
      out << Summary{j["simulated"]["suspend_stop_latency_us"]}.row("queues stopped") << "\n";
    if (!sim_suspend_rt.empty())
      out << Summary{j["simulated"]["suspend_runlist_round_trip_us"]}.row("suspend unmap+remap") << "\n";
    if (!sim_resume.empty())
      out << Summary{j["simulated"]["resume_runlist_round_trip_us"]}.row("resume remap") << "\n";
    if (sim_stop.empty() && sim_resume.empty())
      out << "  (no runlist records: the machine runs the instant hardware model)\n";
  }
  if (incomplete) {
    out << "\n" << incomplete << " suspend(s) did not suspend every queue\n";
    j["error"] = json_conventions::error_object("failed", std::nullopt,
                                                std::to_string(incomplete) + " incomplete suspend(s)");
  }
  emit(g, out.str(), j);
  if (incomplete) {
    exit_partial("bench preempt: " + std::to_string(incomplete) + " incomplete suspend(s)");
  }
}

}  // namespace

void register_bench_commands(CLI::App& app, Globals& globals) {
  CLI::App* bench = app.add_subcommand("bench", "Measure the preemption path");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  CLI::App* pre = add_command(
      *bench, globals, "preempt", "Suspend/resume a process's queues N times and time each call",
      "Each cycle suspends the queues (all, or --queues) and resumes them. Reported per call:\n"
      "the wall-clock time as the caller sees it (hand-off to the control thread, event drain,\n"
      "snapshot refresh, the ioctl), the hop to the control thread alone, and the ioctl alone.\n"
      "Under kfdsim the GPU model's own records are added: how long until the queues stopped and\n"
      "the runlist unmap/remap round trips, in simulated time.\n"
      "Every cycle preempts the whole device runlist twice (HWS): do not run this against a\n"
      "production job.\n"
      "Examples:\n  gpreempt bench preempt --pid 1234 --cycles 200\n"
      "  kfdsim run -- gpreempt bench preempt --pid $(pgrep trainer) --cycles 50 --json\n"
      "A victim on a real GPU (PyTorch on ROCm; docs/hardware.md has the script):\n"
      "  python3 -c 'import torch,itertools as i; a=torch.randn(8192,8192,device=\"cuda\"); "
      "any(a@a is None for _ in i.count())' &\n"
      "  sleep 10; gpreempt bench preempt --pid $! --cycles 1000 --json > bench-preempt.json\n"
      "Exit codes: 0 ok, 1 the process has no GPU queues, attach failed or a suspend was\n"
      "incomplete, 2 usage.");
  add_session_options(pre, o->session);
  pre->add_option("--cycles,-n", o->cycles, "Number of suspend/resume cycles")->capture_default_str();
  pre->add_option("--queues,-q", o->queues, "Queue ids (default: all queues)")->delimiter(',');
  add_grace_options(pre, o->grace);
  pre->add_option("--hold-us", o->hold_us, "Time to keep the queues suspended in each cycle");
  pre->add_option("--gap-us", o->gap_us, "Time between cycles");
  pre->callback([&globals, o] { run_bench(globals, *o); });
}

}  // namespace gpreempt::cli
