// How much the results of the GPU model depend on its estimated parameters: the same preempted
// online/offline point (toy online model at 20 req/s Poisson against a 2048^2 GEMM loop, 20 s
// simulated, MI308X), preempted by the real lib/sched policy in the DES (gpreempt-hint, idle
// hysteresis 0, grace 0 unless stated: suspend on every request, resume when none is left), with
// one model parameter halved or doubled at a time. Prints a Markdown table (docs/sim-model.md,
// "Sensitivity").
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/latency_summary.h"
#include "eval/des/simulation.h"
#include "eval/des/spec.h"

namespace des = gpreempt::eval::des;
namespace gs = gpreempt::sim::gpu;
using nlohmann::ordered_json;

namespace {

ordered_json base() {
  // gpreempt-workload's toy-online and gemm2048 presets.
  return ordered_json::parse(R"({
    "profile": "mi308x", "duration_s": 20, "seed": 3, "baseline": "gpreempt-hint",
    "online": [{"name": "toy", "arrival": {"kind": "poisson", "rate_hz": 20},
                "kernels": [{"name": "linear", "workgroups": 64, "wg_cost_us": 12},
                            {"name": "relu", "workgroups": 64, "wg_cost_us": 3},
                            {"name": "linear", "workgroups": 64, "wg_cost_us": 12}]}],
    "offline": [{"name": "gemm2048", "max_in_flight": 2,
                 "kernels": [{"name": "sgemm_2048", "workgroups": 1024, "wg_cost_us": 700}]}],
    "policy": {"grace_us": 0, "idle_hysteresis_us": 0},
    "record": {"latencies": true, "decisions": false}
  })");
}

double pct(std::vector<double> v, double q) { return v.empty() ? 0 : gpreempt::percentile(std::move(v), q); }

void row(const std::string& label, const ordered_json& doc) {
  const auto r = des::run_simulation(des::parse_spec(doc));
  std::vector<double> stop, trip;
  uint64_t waves = 0, suspends = 0;
  for (const auto& rec : r.runlist) {
    if (rec.kind != gs::RunlistKind::kSuspend) continue;
    ++suspends;
    stop.push_back(static_cast<double>(rec.stopped_ns - rec.requested_ns) / 1e6);
    trip.push_back(static_cast<double>(rec.resumed_ns - rec.requested_ns) / 1e6);
    waves += rec.waves_saved;
  }
  std::printf("| %-34s | %8.3f | %8.3f | %8.3f | %8.3f | %7.1f | %6.0f |\n", label.c_str(),
              pct(stop, 50), pct(trip, 50), pct(r.latencies_ms, 50), pct(r.latencies_ms, 99),
              static_cast<double>(r.offline_iterations) / r.sim_seconds,
              suspends ? static_cast<double>(waves) / static_cast<double>(suspends) : 0.0);
}

}  // namespace

int main() {
  std::printf("| %-34s | %8s | %8s | %8s | %8s | %7s | %6s |\n", "variant", "stop p50", "trip p50",
              "onl p50", "onl p99", "off it/s", "waves");
  std::printf("|%s|---------:|---------:|---------:|---------:|--------:|-------:|\n",
              std::string(36, '-').c_str());
  auto nopre = base();
  nopre["baseline"] = "none";
  row("no preemption (baseline)", nopre);
  row("default MI308X profile", base());
  for (const char* band : {"low", "high"}) {
    auto doc = base();
    doc["model"]["cost_band"] = band;
    row((std::string("cost band ") + band).c_str(), doc);
  }
  const gs::GpuProfile p = gs::mi308x_profile();
  struct Knob {
    const char* name;
    std::vector<std::pair<const char*, double>> fields;
  };
  const std::vector<Knob> knobs = {
      {"save+restore bandwidth", {{"save_bandwidth_gbps", p.save_bandwidth_gbps}, {"restore_bandwidth_gbps", p.restore_bandwidth_gbps}}},
      {"unmap+map latency", {{"unmap_latency_ns", static_cast<double>(p.unmap_latency_ns)}, {"map_latency_ns", static_cast<double>(p.map_latency_ns)}}},
      {"save/restore fixed cost", {{"save_fixed_ns", static_cast<double>(p.save_fixed_ns)}, {"restore_fixed_ns", static_cast<double>(p.restore_fixed_ns)}}},
      {"packet_overhead", {{"packet_overhead_ns", static_cast<double>(p.packet_overhead_ns)}}},
  };
  for (const auto& k : knobs) {
    for (double f : {0.5, 2.0}) {
      auto doc = base();
      for (const auto& [field, value] : k.fields) {
        const bool integral = std::string(field).find("gbps") == std::string::npos;
        if (integral) doc["model"]["params"][field] = static_cast<uint64_t>(value * f);
        else doc["model"]["params"][field] = value * f;
      }
      char label[80];
      std::snprintf(label, sizeof label, "%s x%.1f", k.name, f);
      row(label, doc);
    }
  }
  for (uint32_t g : {100u, 1000u}) {
    auto doc = base();
    doc["policy"]["grace_us"] = g * 1000.0 / p.clock_mhz;  // g units of 1,000 clocks
    char label[80];
    std::snprintf(label, sizeof label, "grace %u kclk", g);
    row(label, doc);
  }
  return 0;
}
