#include "runners.h"

#include <sys/prctl.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "common/thread_scheduling.h"

namespace gpreempt::workloads {

namespace {

using Clock = std::chrono::steady_clock;

int64_t mono_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// A request's latency runs from its arrival time, so a dispatching thread that wakes late for it,
// or a waiter that sees its completion late, adds host scheduling to what the GPU took. Measured
// on the shared 2-core machine (docs/simulator.md, "Live timing"): the default 50 µs timer slack
// made the dispatcher wake 85 µs after the arrival (median), and behind busy CPUs a woken thread
// waited for the running task's slice to end, up to a 4 ms tick.
void punctual_thread() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  gpreempt::request_short_slice(std::chrono::microseconds(100));
}

struct Pending {
  uint64_t id;
  Clock::time_point arrival;
  std::unique_ptr<simrt::Signal> done;
};

}  // namespace

OnlineResult run_online(simrt::Runtime& rt, const OnlineOptions& o) {
  auto q = rt.create_queue(o.priority);
  const double rate = o.rate_hz > 0 ? o.rate_hz : o.preset.online_rate_hz;
  const auto preprocess =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::micro>(
          o.preprocess_us >= 0 ? o.preprocess_us : o.preset.online_preprocess_us));
  std::mt19937_64 rng(o.seed);
  auto gap = [&] {
    const double mean = 1.0 / rate;
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    return std::chrono::duration<double>(o.poisson ? -std::log(u) * mean : mean);
  };

  OnlineResult res;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> fifo;
  bool closed = false;
  std::exception_ptr observer_error;  // set by the waiter, under mu

  // Completions come back in dispatch order (one in-order queue): one waiter suffices.
  punctual_thread();  // before the waiter starts, which inherits both
  std::thread waiter([&] {
    for (;;) {
      Pending p;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return closed || !fifo.empty(); });
        if (fifo.empty()) return;
        p = std::move(fifo.front());
        fifo.pop_front();
      }
      try {
        p.done->wait_eq(0);
      } catch (...) {  // the GPU went away: the run ends with that error, as with the observer's
        std::lock_guard lk(mu);
        observer_error = std::current_exception();
        return;
      }
      const auto t = Clock::now();
      const auto lat = std::chrono::duration_cast<std::chrono::nanoseconds>(t - p.arrival).count();
      if (o.observer && !observer_error) {
        // An observer that fails (gpreemptd gone) ends the run with its error, from the
        // dispatching thread: an exception must not escape this thread.
        try {
          o.observer->request_end(p.id, mono_ns(t), lat);
        } catch (...) {
          std::lock_guard lk(mu);
          observer_error = std::current_exception();
        }
      }
      std::lock_guard lk(mu);
      res.latencies_ms.push_back(static_cast<double>(lat) / 1e6);
      ++res.completed;
    }
  });

  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(o.duration_s);
  auto next = start + std::chrono::duration_cast<Clock::duration>(gap());
  uint64_t id = 0;
  try {
    while (next < end && (o.requests == 0 || id < o.requests)) {
      {
        std::lock_guard lk(mu);
        if (observer_error) std::rethrow_exception(observer_error);
      }
      std::this_thread::sleep_until(next);
      Pending p{id, next, std::make_unique<simrt::Signal>(1)};
      if (preprocess.count() > 0) {
        if (o.observer && o.expect)
          o.observer->request_expected(
              id, std::chrono::duration_cast<std::chrono::microseconds>(preprocess).count());
        std::this_thread::sleep_for(preprocess);
      }
      if (o.observer) o.observer->request_start(id, mono_ns(Clock::now()));
      for (std::size_t i = 0; i < o.preset.online_request.size(); ++i) {
        const bool last = i + 1 == o.preset.online_request.size();
        q->dispatch(o.preset.online_request[i], last ? p.done.get() : nullptr);
      }
      {
        std::lock_guard lk(mu);
        fifo.push_back(std::move(p));
      }
      cv.notify_one();
      ++res.sent;
      ++id;
      next += std::chrono::duration_cast<Clock::duration>(gap());
    }
  } catch (...) {
    {
      std::lock_guard lk(mu);
      closed = true;
    }
    cv.notify_one();
    waiter.join();
    throw;
  }
  {
    std::lock_guard lk(mu);
    closed = true;
  }
  cv.notify_one();
  waiter.join();
  if (observer_error) std::rethrow_exception(observer_error);
  res.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  res.latency_ms = summarize(res.latencies_ms);
  return res;
}

OfflineResult run_offline(simrt::Runtime& rt, const OfflineOptions& o) {
  auto q = rt.create_queue(o.priority);
  OfflineResult res;
  std::deque<std::unique_ptr<simrt::Signal>> in_flight;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(o.duration_s);
  Clock::time_point last_done = start;
  auto retire = [&] {
    in_flight.front()->wait_eq(0);
    in_flight.pop_front();
    last_done = Clock::now();
    ++res.iterations;
  };
  while (Clock::now() < end) {
    auto done = std::make_unique<simrt::Signal>(1);
    for (std::size_t i = 0; i < o.preset.offline_iteration.size(); ++i) {
      const bool last = i + 1 == o.preset.offline_iteration.size();
      q->dispatch(o.preset.offline_iteration[i], last ? done.get() : nullptr);
      ++res.kernels;
    }
    in_flight.push_back(std::move(done));
    while (in_flight.size() >= std::max<uint32_t>(o.in_flight, 1)) retire();
  }
  while (!in_flight.empty()) retire();
  res.elapsed_s = std::chrono::duration<double>(last_done - start).count();
  res.iterations_per_s = res.elapsed_s > 0 ? static_cast<double>(res.iterations) / res.elapsed_s : 0;
  return res;
}

}  // namespace gpreempt::workloads
