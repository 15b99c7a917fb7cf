// Work that other threads hand to an EventLoop's thread. post() may be called from any thread; the
// function runs later on the loop's thread, in the order posted, woken through an eventfd the
// loop watches. The loop itself stays single-threaded: whatever a posted function touches is the
// loop thread's, so the handlers still need no locks.
//
// Construct and destroy it on the loop's thread. Every poster must have stopped before the
// destructor runs (join its thread first): functions still queued then are dropped, unrun.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "common/event_loop.h"

namespace gpreempt {

class LoopInbox {
 public:
  // Throws std::runtime_error naming the failed call.
  explicit LoopInbox(EventLoop& loop);
  ~LoopInbox();
  LoopInbox(const LoopInbox&) = delete;
  LoopInbox& operator=(const LoopInbox&) = delete;

  // Any thread. Never blocks on the loop: the queue is unbounded.
  void post(std::function<void()> fn);

 private:
  void drain();

  EventLoop& loop_;
  int event_fd_ = -1;
  EventLoop::Id watch_ = 0;
  std::mutex mu_;
  std::vector<std::function<void()>> queue_;
};

}  // namespace gpreempt
