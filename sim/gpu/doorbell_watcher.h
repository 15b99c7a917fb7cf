// Doorbell writes that wake the simulated command processor at once.
//
// A real CP sees a doorbell write when it happens; the simulated one polls the write pointers
// (gpu_hardware.cpp, every 250 µs), so a dispatch used to wait 125 µs on average before the GPU
// model noticed it. A runtime that stores its doorbell and then calls FUTEX_WAKE on it (simrt
// does; the doorbell page is a memfd both sides map, so the futex is shared) wakes this watcher's
// thread, which makes `fd()` readable; kfdsimd's loop then ticks the model. A runtime that only
// stores (ROCr) is still seen by the poll.
//
// One thread waits on every watched doorbell at once (futex_waitv, Linux >= 5.16, at most 127
// doorbells; more are left to the poll). It touches nothing but the doorbell words and an
// eventfd: the model stays single-threaded.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace gpreempt::sim::gpu {

class DoorbellWatcher {
 public:
  // Throws gpreempt::Error when the eventfd cannot be made. On a kernel without futex_waitv the
  // thread ends at once and fd() never becomes readable (the poll still sees every dispatch).
  DoorbellWatcher();
  ~DoorbellWatcher();
  DoorbellWatcher(const DoorbellWatcher&) = delete;
  DoorbellWatcher& operator=(const DoorbellWatcher&) = delete;

  // Readable when a watched doorbell rang; drain() before waiting on it again.
  int fd() const { return event_fd_; }
  void drain();
  // Replaces the watched doorbells (the low 32 bits of each 64-bit doorbell). When this returns
  // the thread reads none of the previous words any more, so their pages may be unmapped.
  void watch(std::vector<const volatile uint32_t*> words);
  std::size_t watched() const;

 private:
  void run();
  void interrupt();

  int event_fd_ = -1;
  mutable std::mutex mu_;
  struct Word {
    const volatile uint32_t* at;
    uint32_t seen;  // its value when the thread last looked (or watch() was called)
  };
  std::vector<Word> words_;  // under mu_
  bool stop_ = false;                             // under mu_
  // Bumped and woken to make the thread pick up a new set (a private futex of this process).
  std::atomic<uint32_t> control_{0};
  std::thread thread_;
};

}  // namespace gpreempt::sim::gpu
