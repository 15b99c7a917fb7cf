#include "common/loop_inbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpreempt {

LoopInbox::LoopInbox(EventLoop& loop) : loop_(loop) {
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  try {
    watch_ = loop_.watch(event_fd_, [this] { drain(); });
  } catch (...) {
    ::close(event_fd_);
    throw;
  }
}

LoopInbox::~LoopInbox() {
  loop_.unwatch(watch_);
  ::close(event_fd_);
}

void LoopInbox::post(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(fn));
  }
  uint64_t one = 1;
  ssize_t w = ::write(event_fd_, &one, sizeof one);
  (void)w;  // EAGAIN only when the counter is at its maximum: the loop wakes anyway
}

void LoopInbox::drain() {
  uint64_t n;
  ssize_t r = ::read(event_fd_, &n, sizeof n);
  (void)r;
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    ready.swap(queue_);
  }
  // Outside the lock: a function may post again (it runs at the next wake-up, not in this one).
  for (auto& fn : ready) fn();
}

}  // namespace gpreempt
