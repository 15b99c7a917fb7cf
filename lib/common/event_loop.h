// A single-threaded epoll loop: file descriptors with callbacks, timers (timerfd, absolute
// CLOCK_MONOTONIC times or a period) and signals (signalfd). kfdsimd's server and gpreemptd each
// run on one: one loop, one thread, no locks in the handlers.
//
// A callback may add or remove watches, timers and signals, including its own: an event of a
// watch removed earlier in the same batch is dropped, and a callback is never destroyed while it
// runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>

namespace gpreempt {

class EventLoop {
 public:
  using Id = uint64_t;
  using Callback = std::function<void()>;
  // steady_clock is CLOCK_MONOTONIC on Linux, so its time points are absolute timerfd values.
  using TimePoint = std::chrono::steady_clock::time_point;

  // Throws std::runtime_error naming the failed call.
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Calls `on_readable` whenever `fd` is readable (level-triggered). The fd stays the caller's.
  Id watch(int fd, Callback on_readable);
  // Also call `on_writable` whenever the watched fd is writable (nullptr: stop). A peer that has
  // not taken its bytes yet is waited for this way, never by blocking the loop. With `readable`
  // false the fd is watched for writability only (its readable callback then runs on hang-up or
  // error alone): a peer that has finished sending leaves its end-of-file readable for ever.
  void set_on_writable(Id id, Callback on_writable, bool readable = true);
  void unwatch(Id id);

  // A timer, initially disarmed. Its expirations are consumed before `on_expiry` runs.
  Id add_timer(Callback on_expiry);
  // Fire once at `at` (a time already past fires at once); nullopt disarms.
  void arm_at(Id timer, std::optional<TimePoint> at);
  // Fire every `period`, the first time one period from now.
  void arm_every(Id timer, std::chrono::nanoseconds period);

  // Blocks `signals` in the calling thread and delivers them to `on_signal` through a signalfd.
  // For a process's main loop, not for a library hosting a loop among other things.
  void on_signals(std::initializer_list<int> signals, std::function<void(int signo)> on_signal);

  // Runs until stop(); `after_batch` (if set) runs after each batch of ready events. It may be
  // called again once it has returned (tests drive a loop in steps).
  void run();
  void stop() { stop_ = true; }
  bool stopped() const { return stop_; }
  void set_after_batch(Callback after_batch) { after_batch_ = std::move(after_batch); }

 private:
  struct Watch {
    int fd;
    std::shared_ptr<Callback> callback;  // shared: kept alive while it runs, without a copy
    std::shared_ptr<Callback> on_writable;  // null: readable only
  };
  Id add(int fd, Callback callback);

  int epoll_fd_ = -1;
  Id next_id_ = 1;
  std::map<Id, Watch> watches_;
  std::map<Id, int> timers_;  // timer id (= its watch id) → timerfd, owned by the loop
  int signal_fd_ = -1;
  Callback after_batch_;
  bool stop_ = false;
};

}  // namespace gpreempt
