// How long a sysfs lookup takes on a simulated machine while GPU workloads run: the cost every
// path lookup under the shim pays (a refresh round trip to kfdsimd, then the real call), which
// gpreemptd's discovery pays 1 + 4 times per GPU process per scan.
//
// Run under the shim (bench/sim/lookup_bench.sh does, for 0/3/8 workloads, eager and lazy
// rendering alternately):
//   kfdsim run -- build/bin/bench_sim_lookup --workloads 3 --workload-bin
//   build/bin/gpreempt-workload
// It opens /dev/kfd itself (so proc/<own pid> exists), starts N offline workloads, waits until KFD
// lists them, then times for --seconds each of:
//   pid:   stat("/sys/class/kfd/kfd/proc/<pid>")          (gpreemptd: is the process still there)
//   queue: read  ".../proc/<pid of a workload>/queues/<id>/gpuid"  (a file of one process)
//   list:  opendir + readdir of "/sys/class/kfd/kfd/proc"  (one lookup, O(processes) entries)
// One JSON line: lookups per second, p50 and p99 in microseconds for each, and from the daemon's
// own accounts (kfdsim status) the mean time it spent serving one refresh and the share of the
// wall time its loop spent ticking the hardware model (a request waits behind a tick).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sim/protocol/machine_paths.h"
#include "sim/protocol/query.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  int workloads = 0;
  double seconds = 2.0;
  std::string workload_bin = "gpreempt-workload";
  std::string preset = "toy-offline";
  // Added to the workloads' niceness: their busy waiters compete for the CPU.
  int workload_nice = 0;
  // An ioctl before every lookup (untimed): the daemon must then assume the files changed, as it
  // does under the GPU model's ticks, but without the ticks competing for its loop.
  bool dirty = false;
};

[[noreturn]] void usage(int code) {
  std::fprintf(
      code ? stderr : stdout,
      "usage: bench_sim_lookup [--workloads N] [--seconds S] [--workload-bin PATH]\n"
      "                        [--preset NAME]"
      " [--workload-nice N] [--dirty]\n"
      "Run under the kfdsim shim (kfdsim run -- bench_sim_lookup ...). Prints one JSON line.\n");
  std::exit(code);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (k == "--workloads")
      a.workloads = std::atoi(value().c_str());
    else if (k == "--seconds")
      a.seconds = std::atof(value().c_str());
    else if (k == "--workload-bin")
      a.workload_bin = value();
    else if (k == "--preset")
      a.preset = value();
    else if (k == "--dirty")
      a.dirty = true;
    else if (k == "--workload-nice")
      a.workload_nice = std::atoi(value().c_str());
    else if (k == "-h" || k == "--help")
      usage(0);
    else
      usage(2);
  }
  if (a.workloads < 0 || a.seconds <= 0) usage(2);
  return a;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  closedir(d);
  return out;
}

std::string first_queue_file(const std::vector<int>& pids) {
  for (int pid : pids) {
    const std::string q = "/sys/class/kfd/kfd/proc/" + std::to_string(pid) + "/queues";
    auto ids = list_dir(q);
    if (!ids.empty()) return q + "/" + ids.front() + "/gpuid";
  }
  return {};
}

struct Stats {
  double per_second = 0, p50_us = 0, p99_us = 0;
  std::size_t n = 0;
  double refresh_mean_us = 0;  // daemon side: one refresh request's service time
  double tick_share = 0;       // daemon side: fraction of the wall time spent in hardware ticks
};

// The daemon's loop accounts (Server::status_json "loop"); all zero when unreachable.
struct LoopCost {
  double refresh_count = 0, refresh_ns = 0, tick_ns = 0;
};

LoopCost loop_cost() {
  namespace p = gpreempt::sim::protocol;
  const auto paths = p::machine_paths([](const char* n) { return std::getenv(n); }, getuid());
  auto r = p::query(paths.socket, p::Op::kStatus);
  LoopCost c;
  if (r.error || r.ret != 0) return c;
  auto j = nlohmann::json::parse(r.payload, nullptr, false);
  if (j.is_discarded() || !j.contains("loop")) return c;
  c.refresh_count = j["loop"]["refresh"]["count"].get<double>();
  c.refresh_ns = j["loop"]["refresh"]["total_ns"].get<double>();
  c.tick_ns = j["loop"]["tick"]["total_ns"].get<double>();
  return c;
}

Stats time_for(double seconds, const std::function<void()>& before_each,
               const std::function<void()>& lookup) {
  const LoopCost before = loop_cost();
  std::vector<double> us;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  const auto start = Clock::now();
  Clock::time_point now = start;
  double busy_s = 0;  // time inside lookups: lookups per second leave the untimed ioctls out
  while (now < end) {
    before_each();
    now = Clock::now();
    lookup();
    const auto after = Clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(after - now).count());
    busy_s += std::chrono::duration<double>(after - now).count();
    now = after;
  }
  Stats s;
  s.n = us.size();
  s.per_second = static_cast<double>(us.size()) / busy_s;
  std::sort(us.begin(), us.end());
  s.p50_us = us[us.size() / 2];
  s.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  const LoopCost after = loop_cost();
  if (after.refresh_count > before.refresh_count)
    s.refresh_mean_us =
        (after.refresh_ns - before.refresh_ns) / (after.refresh_count - before.refresh_count) / 1e3;
  s.tick_share = (after.tick_ns - before.tick_ns) /
                 std::chrono::duration<double, std::nano>(now - start).count();
  return s;
}

void print(const char* name, const Stats& s, bool last) {
  std::printf(
      "\"%s\": {\"lookups\": %zu, \"per_second\": %.0f, \"p50_us\": %.1f, \"p99_us\": %.1f, "
      "\"daemon_refresh_mean_us\": %.1f, \"daemon_tick_share\": %.3f}%s",
      name, s.n, s.per_second, s.p50_us, s.p99_us, s.refresh_mean_us, s.tick_share,
      last ? "" : ", ");
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
  if (kfd < 0) {
    std::fprintf(stderr, "bench_sim_lookup: cannot open /dev/kfd (%s): run it under kfdsim run\n",
                 std::strerror(errno));
    return 1;
  }
  std::vector<pid_t> children;
  for (int i = 0; i < a.workloads; ++i) {
    pid_t c = fork();
    if (c == 0) {
      if (a.workload_nice) (void)!nice(a.workload_nice);
      const std::string duration = std::to_string(static_cast<int>(a.seconds * 3 + 60));
      execlp(a.workload_bin.c_str(), a.workload_bin.c_str(), "offline", "--preset",
             a.preset.c_str(), "--duration", duration.c_str(), static_cast<char*>(nullptr));
      std::fprintf(stderr, "bench_sim_lookup: cannot run %s: %s\n", a.workload_bin.c_str(),
                   std::strerror(errno));
      _exit(127);
    }
    children.push_back(c);
  }
  // Wait until every workload has a queue (KFD lists it with queues/<id>).
  std::vector<int> workload_pids(children.begin(), children.end());
  int rc = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    std::size_t with_queue = 0;
    for (int pid : workload_pids)
      if (!list_dir("/sys/class/kfd/kfd/proc/" + std::to_string(pid) + "/queues").empty())
        ++with_queue;
    if (with_queue == workload_pids.size()) break;
    if (Clock::now() > give_up) {
      std::fprintf(stderr, "bench_sim_lookup: only %zu of %d workloads got a queue within 60 s\n",
                   with_queue, a.workloads);
      rc = 1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (rc == 0) {
    const std::string own = "/sys/class/kfd/kfd/proc/" + std::to_string(getpid());
    std::string queue_file = first_queue_file(workload_pids);
    if (queue_file.empty()) queue_file = own + "/pasid";  // no workload: a file of our own
    struct stat st {};
    const auto change = [&] {
      if (!a.dirty) return;
      struct {
        uint32_t major, minor;
      } version{};
      (void)ioctl(kfd, _IOR('K', 0x01, decltype(version)), &version);  // AMDKFD_IOC_GET_VERSION
    };
    Stats pid = time_for(a.seconds, change, [&] { (void)stat(own.c_str(), &st); });
    Stats queue = time_for(a.seconds, change, [&] {
      char buf[64];
      int fd = open(queue_file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        (void)read(fd, buf, sizeof buf);
        close(fd);
      }
    });
    Stats list = time_for(a.seconds, change, [&] { (void)list_dir("/sys/class/kfd/kfd/proc"); });
    std::printf("{\"workloads\": %d, ", a.workloads);
    print("pid", pid, false);
    print("queue", queue, false);
    print("list", list, true);
    std::printf("}\n");
  }
  for (pid_t c : children) kill(c, SIGTERM);
  for (pid_t c : children) waitpid(c, nullptr, 0);
  close(kfd);
  return rc;
}
