// gpreempt-transparent-probe: runs the transparent trigger alone on some pids, with the
// ActivityDetector gpreemptd's Runtime reads its samples with, and prints what the detector infers,
// one JSON object per line. For checking a node ("does transparent detection see my
// service?"), for the end-to-end tests and for bench/transparent. It never attaches to the
// processes it watches.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <variant>

#include "common/error.h"
#include "common/event_loop.h"
#include "sched/activity_detector.h"
#include "transparent/transparent_trigger.h"

using namespace gpreempt;

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void print(const nlohmann::ordered_json& j) {
  std::fputs((j.dump() + "\n").c_str(), stdout);
  std::fflush(stdout);
}

nlohmann::ordered_json to_json(sched::Time t, const sched::Event& e) {
  nlohmann::ordered_json j;
  j["time_ns"] = t.count();
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, sched::event::RequestStarted>) {
          j["event"] = "request_started";
          j["pid"] = ev.key.pid;
          j["request"] = ev.request;
          j["source"] = sched::to_string(ev.source);
        } else if constexpr (std::is_same_v<T, sched::event::RequestFinished>) {
          j["event"] = "request_finished";
          j["pid"] = ev.key.pid;
          j["request"] = ev.request;
          j["source"] = sched::to_string(ev.source);
        } else if constexpr (std::is_same_v<T, sched::event::KernelObserved>) {
          j["event"] = "kernel_observed";
          j["pid"] = ev.key.pid;
          j["gpu_id"] = ev.gpu;
          j["length_ns"] = ev.length.count();
        } else {
          j["event"] = "other";
        }
      },
      e);
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Watch processes' GPU queues the way gpreemptd's transparent trigger does"};
  app.footer(
      "Prints one JSON object per line: request_started / request_finished / kernel_observed\n"
      "(time_ns on CLOCK_MONOTONIC), watching / unwatched / note, and a final summary with the\n"
      "CPU time the probe used. Needs what the trigger needs: debugfs (root) and process_vm_readv\n"
      "on the pids (docs/transparent.md).\n"
      "Examples:\n"
      "  sudo gpreempt-transparent-probe --pid 4242 --duration 10\n"
      "  kfdsim run -- gpreempt-transparent-probe --pid $(pgrep -f serve) --interval-us 100\n"
      "Exit codes: 0 ok, 1 a pid could not be watched, 2 usage.");
  std::vector<int> pids;
  int64_t interval_us = 200, settle_us = 0, queue_check_ms = 50;
  double duration = 0;
  bool until_unwatched = false, kernels = false;
  std::string debugfs = "/sys/kernel/debug/kfd";
  app.add_option("--pid", pids, "Process to watch (repeatable)")->required();
  app.add_option("--interval-us", interval_us, "Poll interval, 100..500 us")->capture_default_str();
  app.add_option("--queue-check-ms", queue_check_ms, "How often the queue list is re-checked")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--settle-us", settle_us, "Idle time before a request ends")
      ->capture_default_str();
  app.add_option("--duration", duration,
                 "Stop after this many seconds (0: until every pid is unwatched)");
  app.add_flag("--until-unwatched", until_unwatched, "Stop once every pid is unwatched (exited)");
  app.add_flag("--kernels", kernels, "Also print kernel_observed lines");
  app.add_option("--debugfs", debugfs, "KFD debugfs directory")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (duration <= 0 && !until_unwatched) until_unwatched = true;

  EventLoop loop;
  gpreemptd::TransparentTriggerConfig cfg;
  cfg.poll_interval = std::chrono::microseconds(interval_us);
  cfg.queue_check_interval = std::chrono::milliseconds(queue_check_ms);
  cfg.sources.debugfs = debugfs;
  cfg.log = [](const std::string& s) { print({{"event", "note"}, {"message", s}}); };
  std::unique_ptr<gpreemptd::TransparentTrigger> trigger;
  std::size_t unwatched = 0;
  cfg.on_unwatched = [&](const sched::ProcessKey& k, const std::string& why) {
    print({{"event", "unwatched"}, {"pid", k.pid}, {"reason", why}});
    if (until_unwatched && ++unwatched == pids.size()) loop.stop();
  };
  sched::ActivityDetector detector(
      sched::ActivityDetectorConfig{std::chrono::microseconds(settle_us), kernels});
  const auto print_all = [](sched::Time t, const std::vector<sched::Event>& events) {
    for (const auto& e : events) print(to_json(t, e));
  };
  try {
    trigger = std::make_unique<gpreemptd::TransparentTrigger>(
        loop, cfg,
        gpreemptd::TransparentTrigger::Sink{
            [&](sched::Time t, const sched::ProcessKey& key,
                const std::vector<sched::QueueActivitySample>& samples) {
              print_all(t, detector.update(t, key, samples));
            },
            [&](sched::Time t, const sched::ProcessKey& key) {
              print_all(t, detector.forget(t, key));
            }});
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gpreempt-transparent-probe: %s\n", e.what());
    return 2;
  }
  for (int pid : pids) {
    try {
      trigger->watch(sched::ProcessKey{pid, 0}, pid);
    } catch (const Error& e) {
      std::fprintf(stderr, "gpreempt-transparent-probe: cannot watch pid %d: %s\n", pid, e.what());
      return 1;
    }
    const sched::ProcessKey key{pid, 0};
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    print({{"event", "watching"},
           {"pid", pid},
           {"queues", trigger->queue_count(key)},
           {"time_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count()},
           {"read_method",
            trigger->read_method_note(key).empty() ? "process_vm_readv" : "/proc/PID/mem"}});
  }
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  EventLoop::Id stop_timer = 0;
  if (duration > 0) {
    stop_timer = loop.add_timer([&] { loop.stop(); });
    loop.arm_at(stop_timer, t0 + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::duration<double>(duration)));
  }
  loop.on_signals({SIGINT, SIGTERM}, [&](int) { loop.stop(); });
  loop.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  const auto& st = trigger->stats();
  print({{"event", "summary"},
         {"interval_us", interval_us},
         {"wall_s", wall},
         {"cpu_s", cpu},
         {"cpu_percent_of_one_core", wall > 0 ? 100.0 * cpu / wall : 0.0},
         {"polls", st.polls},
         {"samples", st.samples},
         {"read_errors", st.read_errors},
         {"address_reads", st.address_reads},
         {"requests", detector.stats().requests}});
  return 0;
}
