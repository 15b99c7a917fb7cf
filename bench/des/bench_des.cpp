// DES speed: simulated seconds per CPU second and events per second, per baseline, on a point
// (default: bench/des/headline.json — 1 ResNet-18-like online client, 1000 Poisson requests at
// 20/s, against 1 ResNet-50-training-like offline job on one simulated MI308X).
//
//   build/bin/bench_des [SPEC.json] [--gpus N]
//
// --gpus N copies the point onto N GPUs (an online client and an offline job per GPU) to show how
// the cost grows with the node.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "eval/des/simulation.h"
#include "eval/des/spec.h"

namespace des = gpreempt::eval::des;

int main(int argc, char** argv) {
  std::string path = GPREEMPT_BENCH_DES_DIR "/headline.json";
  unsigned gpus = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gpus") && i + 1 < argc) gpus = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (!std::strcmp(argv[i], "--help")) {
      std::puts("usage: bench_des [SPEC.json] [--gpus N]");
      return 0;
    } else path = argv[i];
  }
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "bench_des: cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::ordered_json::parse(ss.str());
  if (gpus > 1) {
    doc["gpus"] = gpus;
    auto on = doc["online"], off = doc["offline"];
    for (unsigned g = 1; g < gpus; ++g) {
      for (auto c : on) {
        c["name"] = c["name"].get<std::string>() + "-g" + std::to_string(g);
        c["gpu"] = g;
        doc["online"].push_back(c);
      }
      for (auto c : off) {
        c["name"] = c["name"].get<std::string>() + "-g" + std::to_string(g);
        c["gpu"] = g;
        doc["offline"].push_back(c);
      }
    }
  }
  doc["solo"] = false;
  std::printf("%-22s %10s %10s %12s %14s %12s %9s %9s\n", "baseline", "sim_s", "cpu_s", "sim_s/cpu_s",
              "events", "events/s", "p99_ms", "off_it/s");
  for (const auto& b : des::baseline_names()) {
    doc["baseline"] = b;
    const des::Spec spec = des::parse_spec(doc, path.substr(0, path.find_last_of('/')));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = des::run_simulation(spec);
    const double cpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-22s %10.2f %10.3f %12.1f %14llu %12.0f %9.3f %9.2f\n", b.c_str(), r.sim_seconds, cpu,
                r.sim_seconds / cpu, static_cast<unsigned long long>(r.events),
                static_cast<double>(r.events) / cpu, des::percentile(r.latencies_ms, 99),
                static_cast<double>(r.offline_iterations) / r.sim_seconds);
  }
  return 0;
}
