// How much the results of the GPU model depend on its estimated parameters: the same preempted
// online/offline scenario (toy online model at 20 req/s Poisson against a 2048^2 GEMM loop, 20 s
// simulated, MI308X) with one parameter halved or doubled at a time. Prints a Markdown table
// (docs/sim-model.md, "Sensitivity").
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "sim/gpu/scenario.h"

namespace gs = gpreempt::sim::gpu;

namespace {

gs::KernelSpec kernel(const char* name, uint32_t items, gs::SimTime wg_ns) {
  gs::KernelSpec k;
  k.name = name;
  k.grid = {items, 1, 1};
  k.workgroup = {256, 1, 1};
  k.wg_cost_ns = wg_ns;
  return k;
}

gs::ScenarioConfig base() {
  gs::ScenarioConfig c;
  c.duration_ns = 20'000'000'000;
  c.online_rate_hz = 20;
  c.seed = 3;
  // gpreempt-workload's toy-online and gemm2048 presets.
  c.online_request = {kernel("linear", 32 * 512, 12'000), kernel("relu", 32 * 512, 3'000),
                      kernel("linear", 32 * 512, 12'000)};
  c.offline_iteration = {kernel("sgemm_2048", 1024 * 256, 700'000)};
  c.preempt = true;
  return c;
}

double pct(std::vector<gs::SimTime> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return static_cast<double>(v[i]) / 1e6;
}

void row(const std::string& label, const gs::ScenarioConfig& c) {
  const auto r = gs::run_scenario(c);
  std::vector<gs::SimTime> stop, trip;
  uint64_t waves = 0, suspends = 0;
  for (const auto& rec : r.runlist) {
    if (rec.kind != gs::RunlistKind::kSuspend) continue;
    ++suspends;
    stop.push_back(rec.stopped_ns - rec.requested_ns);
    trip.push_back(rec.resumed_ns - rec.requested_ns);
    waves += rec.waves_saved;
  }
  std::printf("| %-34s | %8.3f | %8.3f | %8.3f | %8.3f | %7.1f | %6.0f |\n", label.c_str(),
              pct(stop, 50), pct(trip, 50), pct(r.latencies_ns, 50), pct(r.latencies_ns, 99),
              static_cast<double>(r.offline_iterations) / (static_cast<double>(c.duration_ns) / 1e9),
              suspends ? static_cast<double>(waves) / static_cast<double>(suspends) : 0.0);
}

}  // namespace

int main() {
  std::printf("| %-34s | %8s | %8s | %8s | %8s | %7s | %6s |\n", "variant", "stop p50", "trip p50",
              "onl p50", "onl p99", "off it/s", "waves");
  std::printf("|%s|---------:|---------:|---------:|---------:|--------:|-------:|\n",
              std::string(36, '-').c_str());
  auto nopre = base();
  nopre.preempt = false;
  row("no preemption (baseline)", nopre);
  row("default MI308X profile", base());
  struct Knob {
    const char* name;
    std::function<void(gs::GpuProfile&, double)> apply;
  };
  const std::vector<Knob> knobs = {
      {"save+restore bandwidth", [](gs::GpuProfile& p, double f) {
         p.save_bandwidth_gbps *= f;
         p.restore_bandwidth_gbps *= f;
       }},
      {"wave_state_bytes", [](gs::GpuProfile& p, double f) {
         p.wave_state_bytes = static_cast<uint64_t>(static_cast<double>(p.wave_state_bytes) * f);
       }},
      {"unmap+map latency", [](gs::GpuProfile& p, double f) {
         p.unmap_latency_ns = static_cast<gs::SimTime>(static_cast<double>(p.unmap_latency_ns) * f);
         p.map_latency_ns = static_cast<gs::SimTime>(static_cast<double>(p.map_latency_ns) * f);
       }},
      {"save/restore fixed cost", [](gs::GpuProfile& p, double f) {
         p.save_fixed_ns = static_cast<gs::SimTime>(static_cast<double>(p.save_fixed_ns) * f);
         p.restore_fixed_ns = static_cast<gs::SimTime>(static_cast<double>(p.restore_fixed_ns) * f);
       }},
      {"packet_overhead", [](gs::GpuProfile& p, double f) {
         p.packet_overhead_ns = static_cast<gs::SimTime>(static_cast<double>(p.packet_overhead_ns) * f);
       }},
  };
  for (const auto& k : knobs) {
    for (double f : {0.5, 2.0}) {
      auto c = base();
      k.apply(c.profile, f);
      char label[80];
      std::snprintf(label, sizeof label, "%s x%.1f", k.name, f);
      row(label, c);
    }
  }
  for (uint32_t g : {100u, 1000u}) {
    auto c = base();
    c.grace_kclk = g;
    char label[80];
    std::snprintf(label, sizeof label, "grace %u kclk", g);
    row(label, c);
  }
  return 0;
}
