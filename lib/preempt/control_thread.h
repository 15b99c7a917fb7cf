// The control thread: one per library context. The KFD accepts DBG_TRAP for a target only from the
// thread that is the ptrace tracer of the target's main thread
// (docs/kfd-interface.md#ptrace-check), so this one thread does every ptrace and DBG_TRAP call;
// public calls from any thread are handed to it and wait.
//
// Between calls it polls the owner's file descriptors (debug event pipes, the signal pipe) and
// runs the owner's periodic tick (servicing tracee stops, the watchdog). The hop from the caller
// to this thread is on the preemption path, so it is measured.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <thread>
#include <vector>

namespace gpreempt::preempt {

// What the control thread does when it is not running a call. All methods run on that thread.
class ControlLoop {
 public:
  virtual ~ControlLoop() = default;
  virtual std::vector<int> watched_fds() = 0;
  virtual void on_readable(int fd) = 0;
  virtual void tick() = 0;
  virtual std::chrono::milliseconds tick_interval() = 0;
  // on_readable() or tick() threw: the loop carries on (an escaping exception would terminate the
  // process, taking the targets' only resumer with it).
  virtual void on_loop_error(const std::string& what) { (void)what; }
};

struct HopStats {
  uint64_t calls = 0;
  uint64_t last_hop_ns = 0;    // submit → start of execution on the control thread
  uint64_t max_hop_ns = 0;
  uint64_t total_hop_ns = 0;
  uint64_t last_return_ns = 0;  // end of execution → the caller running again
};

class ControlThread {
 public:
  explicit ControlThread(ControlLoop& loop);
  // Stops and joins; pending calls fail with ECANCELED. In a forked child it only releases.
  ~ControlThread();
  ControlThread(const ControlThread&) = delete;
  ControlThread& operator=(const ControlThread&) = delete;

  // Run `fn` on the control thread and return its result (or rethrow its exception). Called on
  // the control thread itself, it runs inline. Throws Error(ECHILD) in a forked child.
  template <class F>
  auto call(F&& fn) -> decltype(fn()) {
    using R = decltype(fn());
    if (on_control_thread()) return fn();
    if constexpr (std::is_void_v<R>) {
      run(std::function<void()>(std::forward<F>(fn)));
    } else {
      std::optional<R> result;
      run([&] { result.emplace(fn()); });
      return std::move(*result);
    }
  }

  // Queue `fn` to run on the control thread and return at once. `fn` must not throw (there is
  // nobody to rethrow to: what escapes is reported through ControlLoop::on_loop_error). Throws
  // Error(ECANCELED) when the thread is stopping and Error(ECHILD) in a forked child.
  void post(std::function<void()> fn);

  bool on_control_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Wake the loop (e.g. after the set of watched fds changed).
  void wake();
  HopStats hop_stats() const;
  // The thread's scheduling (common/thread_scheduling.h): a daemon that must act on a busy machine
  // runs it under SCHED_FIFO.
  void set_realtime_priority(int priority);

 private:
  struct Job {
    std::function<void()> fn;
    std::chrono::steady_clock::time_point submitted;
    std::chrono::steady_clock::time_point finished;
    std::exception_ptr error;
    bool done = false;
    bool detached = false;  // posted: nobody waits, the thread deletes it
  };
  void run(std::function<void()> fn);
  void main();
  void report_loop_error(const char* what) noexcept;
  // One call ran, `hop_ns` after it was submitted (mu_ held).
  void count_call(uint64_t hop_ns);

  ControlLoop& loop_;
  pid_t owner_;  // calls from a forked child fail ECHILD
  int wake_fd_ = -1;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> queue_;
  bool stopping_ = false;
  HopStats stats_;
  std::thread thread_;
};

}  // namespace gpreempt::preempt
