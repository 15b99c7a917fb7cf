// DES speed: simulated seconds per wall second and per CPU second, and events per second, per
// baseline, on a point (default: bench/des/headline.json — 1 ResNet-18-like online client, 1000
// Poisson requests at 20/s, against 1 ResNet-50-training-like offline job on one simulated MI308X).
//
//   build/bin/bench_des [SPEC.json] [--gpus N] [--repeat N]
//
// --gpus N copies the point onto N GPUs (an online client and an offline job per GPU) to show how
// the cost grows with the node. --repeat N (default 5) runs each baseline N times and prints the
// median: on a shared machine a single run's wall time is mostly the neighbours' load, and the
// median of several is the figure worth quoting. CPU time (this process's) is printed beside the
// wall time because it is the less load-dependent of the two.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/latency_summary.h"
#include "eval/des/policy.h"
#include "eval/des/simulation.h"
#include "eval/des/spec.h"

namespace des = gpreempt::eval::des;

namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

unsigned positive(const char* flag, const char* text) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v == 0 || v > 1000) {
    std::fprintf(stderr, "bench_des: %s expects an integer 1..1000, got '%s'\n", flag, text);
    std::exit(2);
  }
  return static_cast<unsigned>(v);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = GPREEMPT_BENCH_DES_DIR "/headline.json";
  unsigned gpus = 1;
  unsigned repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gpus") && i + 1 < argc)
      gpus = positive("--gpus", argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = positive("--repeat", argv[++i]);
    else if (!std::strcmp(argv[i], "--help")) {
      std::puts(
          "usage: bench_des [SPEC.json] [--gpus N] [--repeat N]\n"
          "Medians over N runs (default 5) per baseline: wall and CPU seconds, simulated seconds "
          "per\n"
          "wall second and per CPU second, events per wall second.");
      return 0;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "bench_des: unknown option %s (--help)\n", argv[i]);
      return 2;
    } else
      path = argv[i];
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
  std::printf("# %s, %u GPU(s), median of %u run(s) per baseline\n", path.c_str(), gpus, repeat);
  std::printf("%-22s %8s %8s %8s %11s %10s %12s %11s %11s %8s %8s\n", "baseline", "sim_s", "wall_s",
              "cpu_s", "sim_s/wall", "sim_s/cpu", "events", "ev/wall_s", "ev/cpu_s", "p99_ms",
              "off_it/s");
  for (const auto& b : des::baseline_names()) {
    doc["baseline"] = b;
    const des::Spec spec = des::parse_spec(doc, path.substr(0, path.find_last_of('/')));
    std::vector<double> walls, cpus;
    des::RunResult r;
    for (unsigned k = 0; k < repeat; ++k) {
      const double c0 = process_cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      r = des::run_simulation(spec);
      walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      cpus.push_back(process_cpu_seconds() - c0);
    }
    const double wall = median(walls), cpu = median(cpus);
    std::printf("%-22s %8.2f %8.3f %8.3f %11.1f %10.1f %12llu %10.2fM %10.2fM %8.3f %8.2f\n",
                b.c_str(), r.sim_seconds, wall, cpu, r.sim_seconds / wall, r.sim_seconds / cpu,
                static_cast<unsigned long long>(r.events),
                static_cast<double>(r.events) / wall / 1e6,
                static_cast<double>(r.events) / cpu / 1e6, gpreempt::percentile(r.latencies_ms, 99),
                static_cast<double>(r.offline_iterations) / r.sim_seconds);
  }
  return 0;
}
