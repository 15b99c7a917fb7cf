// bench_log_analyzer: how fast `gpreempt log analyze` streams a large AMD_LOG_LEVEL log, measured
// against `grep -c` over the same file in the same run (the target: within 2x of grep while
// extracting queues, dispatches, kernels, threads and errors).
//
//   bench_log_analyzer [--size-mb N] [--runs R] [--file PATH] [--keep] [--pattern P]
//
// Without --file it writes N MiB (default 1024) made of the real captures' lines repeated
// ($GPREEMPT_SHARED_DIR/realdata/amdlog when present, else built-in lines), then times R runs
// (default 5) of each tool alternately, warm cache, and prints the medians and the ratio
// analyzer/grep, both of wall time and of CPU time (user + system): on a shared machine the wall
// time also counts the time other processes held the cores, the CPU time much less so.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "logs/hip_log_analyzer.h"
#include "logs/log_file.h"

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string source_lines() {
  std::string text;
  const char* env = std::getenv("GPREEMPT_SHARED_DIR");
  fs::path dir = fs::path(env ? env : GPREEMPT_DEFAULT_SHARED_DIR) / "realdata/amdlog";
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".log") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string t = ss.str();
      if (!t.empty() && t.back() != '\n') t += '\n';
      text += t;
    }
  }
  if (text.empty()) {
    text =
        ":4:rocvirtual.cpp           :1083: 20161701400 us: [pid:459769 tid: 0x7f8edc1c4400] SWq=0x7f8edc1a8000, HWq=0x7f8acd200000, id=1, Dispatch Header = 0xb02 (type=2, barrier=1, acquire=1, release=1), setup=3, grid=[1024, 1, 1], workgroup=[32, 1, 1]\n"
        ":3:rocvirtual.cpp           :3351: 6306362974 us: [pid:459769 tid: 0x7f8edc1c4400] ShaderName : dummy_kernel(int*, int)\n"
        ":3:hip_module.cpp           :813 : 6306362980 us: [pid:459769 tid: 0x7f8edc1c4400] hipLaunchKernel: Returned hipSuccess : : duration: 10 us\n";
  }
  return text;
}

fs::path generate(std::size_t bytes) {
  const std::string unit = source_lines();
  fs::path path = fs::temp_directory_path() / ("gpreempt_bench_log_" + std::to_string(getpid()) + ".log");
  std::ofstream out(path, std::ios::binary);
  std::string block;
  while (block.size() < (8u << 20)) block += unit;
  std::size_t written = 0;
  while (written < bytes) {
    const std::size_t n = std::min(block.size(), bytes - written);
    out.write(block.data(), static_cast<std::streamsize>(n));
    written += n;
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
  return path;
}

struct Times {
  double wall = 0, cpu = 0;
};

double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

Times run_analyzer(const fs::path& path, unsigned threads, gpreempt::logs::LogSummary& last) {
  const double c0 = cpu_seconds(RUSAGE_SELF);
  const auto t0 = Clock::now();
  last = gpreempt::logs::analyze_file(path.string(), {}, threads);
  return {std::chrono::duration<double>(Clock::now() - t0).count(), cpu_seconds(RUSAGE_SELF) - c0};
}

// GNU grep stops at the first match when its output is /dev/null, so the count goes to a file.
Times run_grep(const fs::path& path, const std::string& pattern, std::string& count) {
  const fs::path out = path.string() + ".grep";
  const double c0 = cpu_seconds(RUSAGE_CHILDREN);
  const auto t0 = Clock::now();
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string p = path.string();
  char* argv[] = {const_cast<char*>("grep"), const_cast<char*>("-c"), const_cast<char*>(pattern.c_str()),
                  p.data(), nullptr};
  if (posix_spawnp(&pid, "grep", &fa, nullptr, argv, environ) != 0) throw std::runtime_error("cannot run grep");
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  waitpid(pid, &status, 0);
  const Times t{std::chrono::duration<double>(Clock::now() - t0).count(), cpu_seconds(RUSAGE_CHILDREN) - c0};
  std::ifstream in(out);
  std::getline(in, count);
  fs::remove(out);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t size_mb = 1024;
  int runs = 5;
  std::string file, pattern = "HWq";
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--size-mb") size_mb = std::stoul(next());
    else if (a == "--runs") runs = std::stoi(next());
    else if (a == "--file") file = next();
    else if (a == "--pattern") pattern = next();
    else if (a == "--keep") keep = true;
    else {
      std::cerr << "usage: bench_log_analyzer [--size-mb N] [--runs R] [--file PATH] [--pattern P] [--keep]\n";
      return a == "--help" ? 0 : 2;
    }
  }
  try {
    fs::path path = file.empty() ? generate(size_mb << 20) : fs::path(file);
    const double mib = static_cast<double>(fs::file_size(path)) / (1 << 20);
    gpreempt::logs::LogSummary summary;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    run_analyzer(path, 1, summary);  // warm the page cache for every tool
    std::string count;
    run_grep(path, pattern, count);
    std::vector<double> t1, tn, tg, c1, cn, cg;
    for (int r = 0; r < runs; ++r) {
      const Times a = run_analyzer(path, 1, summary);
      t1.push_back(a.wall);
      c1.push_back(a.cpu);
      if (cores > 1) {
        const Times b = run_analyzer(path, cores, summary);
        tn.push_back(b.wall);
        cn.push_back(b.cpu);
      }
      const Times g = run_grep(path, pattern, count);
      tg.push_back(g.wall);
      cg.push_back(g.cpu);
    }
    const double m1 = median(t1), mg = median(tg);
    std::printf("file        %s (%.0f MiB, %llu lines)\n", path.c_str(), mib,
                static_cast<unsigned long long>(summary.lines));
    std::printf("analyzer    1 thread   median %.3f s  %.0f MiB/s  (%llu records, %zu HW queues, %llu dispatches)\n",
                m1, mib / m1, static_cast<unsigned long long>(summary.records), summary.hw_queues.size(),
                static_cast<unsigned long long>(summary.dispatches));
    if (cores > 1) {
      const double mn = median(tn);
      std::printf("analyzer    %u threads  median %.3f s  %.0f MiB/s\n", cores, mn, mib / mn);
    }
    std::printf("grep -c %s  median %.3f s  %.0f MiB/s  (count %s)\n", pattern.c_str(), mg, mib / mg,
                count.c_str());
    std::printf("ratio       %.2f x grep with 1 thread", m1 / mg);
    if (cores > 1) std::printf(", %.2f x grep with %u threads", median(tn) / mg, cores);
    std::printf(" (median of %d runs; target <= 2)\n", runs);
    std::printf("cpu time    analyzer 1 thread %.3f s", median(c1));
    if (cores > 1) std::printf(", %u threads %.3f s (all threads)", cores, median(cn));
    std::printf(", grep %.3f s: analyzer/grep %.2f x (1 thread)\n", median(cg), median(c1) / median(cg));
    if (file.empty() && !keep) fs::remove(path);
  } catch (const std::exception& e) {
    std::cerr << "bench_log_analyzer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
