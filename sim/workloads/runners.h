// The two workload loops on top of simrt. They read the wall clock (they are the workload, not
// policy): latency is what a client of an online service would see.
#pragma once

#include <cstdint>
#include <vector>

#include "common/latency_summary.h"
#include "notifier.h"
#include "presets.h"
#include "simrt/simrt.hpp"

namespace gpreempt::workloads {

struct OnlineOptions {
  Preset preset;
  double duration_s = 10;
  uint64_t requests = 0;  // stop after this many arrivals, or at duration_s if sooner; 0: no limit
  double rate_hz = 0;     // 0 = the preset's
  bool poisson = true;
  uint64_t seed = 1;
  uint32_t priority = 7;
  RequestObserver* observer = nullptr;
  // Host work before each request's first kernel (decoding, resizing the input); part of the
  // request's latency. Negative: the preset's.
  double preprocess_us = -1;
  // Tell the observer before the pre-processing that a request follows (early hint).
  bool expect = false;
};

struct OnlineResult {
  uint64_t sent = 0;
  uint64_t completed = 0;
  double elapsed_s = 0;
  std::vector<double> latencies_ms;
  LatencySummary latency_ms;
};

// Open loop: requests are dispatched at their arrival times whether or not earlier ones are done.
OnlineResult run_online(simrt::Runtime& rt, const OnlineOptions& o);

struct OfflineOptions {
  Preset preset;
  double duration_s = 10;
  uint32_t priority = 7;
  // Iterations queued ahead, as an asynchronous framework keeps the GPU fed: the host (and the
  // simulated CP, which notices packets at its write-pointer poll) never leaves the queue dry.
  uint32_t in_flight = 4;
};

struct OfflineResult {
  uint64_t iterations = 0;
  uint64_t kernels = 0;
  double elapsed_s = 0;
  double iterations_per_s = 0;
};

OfflineResult run_offline(simrt::Runtime& rt, const OfflineOptions& o);

}  // namespace gpreempt::workloads
