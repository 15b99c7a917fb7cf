// The CPU floor of any poller on this machine: gpreemptd's EventLoop with one periodic timer and
// nothing else to do (or, with --read, one process_vm_readv of two 8-byte words per expiry, what
// the transparent trigger does per watched process). detection_delay.py runs it beside the
// trigger, so the trigger's CPU is read against the wake-ups it cannot avoid, in the same run.
//
//   gpreempt-bench-timer-floor --interval-us 200 --seconds 3 [--read]
//
// Prints one JSON line: interval_us, polls, wall_s, cpu_percent_of_one_core, cpu_us_per_poll.
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/event_loop.h"

namespace {

double cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

int usage() {
  std::fprintf(stderr, "usage: gpreempt-bench-timer-floor --interval-us 100..100000 --seconds S [--read]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long interval_us = 200;
  double seconds = 3;
  bool read = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--read") {
      read = true;
    } else if (a == "--interval-us" && i + 1 < argc) {
      interval_us = std::strtol(argv[++i], nullptr, 10);
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::strtod(argv[++i], nullptr);
    } else {
      return usage();
    }
  }
  if (interval_us < 100 || interval_us > 100000 || !(seconds > 0)) return usage();

  static uint64_t words[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const pid_t self = ::getpid();
  gpreempt::EventLoop loop;
  uint64_t polls = 0;
  const auto start = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  const auto end = start + std::chrono::duration<double>(seconds);
  const auto timer = loop.add_timer([&] {
    ++polls;
    if (read) {
      // The trigger's read: a queue's read pointer, then its write pointer (0x48 apart).
      uint64_t out[2];
      iovec local{out, sizeof out};
      iovec remote[2] = {{&words[9], 8}, {&words[0], 8}};
      if (::process_vm_readv(self, &local, 1, remote, 2, 0) != 16) {
        std::fprintf(stderr, "process_vm_readv: %s\n", std::strerror(errno));
        std::exit(1);
      }
    }
    if (std::chrono::steady_clock::now() >= end) loop.stop();
  });
  loop.arm_every(timer, std::chrono::microseconds(interval_us));
  loop.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = cpu_seconds() - cpu0;
  std::printf(
      "{\"interval_us\": %ld, \"read\": %s, \"polls\": %llu, \"wall_s\": %.3f, "
      "\"cpu_percent_of_one_core\": %.3f, \"cpu_us_per_poll\": %.3f}\n",
      interval_us, read ? "true" : "false", static_cast<unsigned long long>(polls), wall,
      100.0 * cpu / wall, polls ? 1e6 * cpu / static_cast<double>(polls) : 0.0);
  return 0;
}
