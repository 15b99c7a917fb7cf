// Whether this machine lets a thread of the test run under SCHED_FIFO (root or CAP_SYS_NICE, and
// no real-time group budget of 0), for the tests of real-time scheduling to skip with the reason.
#pragma once

#include <optional>
#include <string>
#include <thread>

#include "common/error.h"
#include "common/thread_scheduling.h"

namespace gpreempt::testing {

// nullopt when permitted, else the kernel's refusal (tried on a thread of its own, which ends).
inline std::optional<std::string> realtime_unavailable() {
  std::optional<std::string> why;
  std::thread([&] {
    try {
      set_thread_realtime_priority(pthread_self(), 1);
    } catch (const Error& e) {
      why = e.what();
    }
  }).join();
  return why;
}

}  // namespace gpreempt::testing
