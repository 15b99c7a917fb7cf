// Hint round trip: how long gpreempt_client_request_begin / _end take, from the call to the
// daemon's reply, against the in-process fake gpreemptd of the client tests (its server thread
// answers at once), so the figure is the client + socket + protocol cost alone — the floor under
// the daemon-added latency that issue 14 bounds. Not part of the test suite.
//
//   bench_hint_latency [--calls N] [--warmup N] [--json]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/latency_summary.h"
#include "fake_daemon.h"
#include "gpreempt/client.h"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

[[noreturn]] void die(const char* what, int err) {
  std::fprintf(stderr, "bench_hint_latency: %s: %s (%s)\n", what, gpreempt_strerror(err), gpreempt_last_error());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  long calls = 2000, warmup = 200;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) {
      calls = std::strtol(argv[++i], nullptr, 10);
    } else if (a == "--warmup" && i + 1 < argc) {
      warmup = std::strtol(argv[++i], nullptr, 10);
    } else if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "usage: bench_hint_latency [--calls N (>= 1000)] [--warmup N] [--json]\n");
      return 2;
    }
  }
  if (calls < 1000 || warmup < 0) {
    std::fprintf(stderr, "bench_hint_latency: --calls must be >= 1000 (so p99 is not the maximum)\n");
    return 2;
  }

  gpreempt::client::testing::FakeDaemon daemon;
  gpreempt_client* c = nullptr;
  if (int r = gpreempt_client_connect(daemon.path().c_str(), nullptr, &c)) die("connect", r);

  std::vector<double> begin_us, end_us;
  begin_us.reserve(static_cast<std::size_t>(calls));
  end_us.reserve(static_cast<std::size_t>(calls));
  for (long i = 0; i < warmup + calls; ++i) {
    uint64_t id = 0;
    auto t0 = Clock::now();
    if (int r = gpreempt_client_request_begin(c, &id)) die("request_begin", r);
    const double b = us_since(t0);
    t0 = Clock::now();
    if (int r = gpreempt_client_request_end(c, id)) die("request_end", r);
    const double e = us_since(t0);
    if (i >= warmup) {
      begin_us.push_back(b);
      end_us.push_back(e);
    }
  }
  gpreempt_client_close(c);

  const auto b = gpreempt::summarize(begin_us);
  const auto e = gpreempt::summarize(end_us);
  if (json) {
    nlohmann::ordered_json j;
    j["calls"] = calls;
    j["begin_round_trip_us"] = gpreempt::to_json(b);
    j["end_round_trip_us"] = gpreempt::to_json(e);
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("hint round trip over a Unix socket to a fake gpreemptd (%ld calls each, %ld warm-up)\n",
                calls, warmup);
    std::printf("  %-6s p50 %8.1f us  p99 %8.1f us  mean %8.1f us  max %8.1f us\n", "begin", b.p50, b.p99,
                b.mean, b.max);
    std::printf("  %-6s p50 %8.1f us  p99 %8.1f us  mean %8.1f us  max %8.1f us\n", "end", e.p50, e.p99,
                e.mean, e.max);
  }
  return 0;
}
