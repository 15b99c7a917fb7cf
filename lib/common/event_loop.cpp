#include "common/event_loop.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpreempt {

namespace {
[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}
}  // namespace

EventLoop::EventLoop() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) fail("epoll_create1");
}

EventLoop::~EventLoop() {
  for (auto& [id, fd] : timers_) ::close(fd);
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

EventLoop::Id EventLoop::add(int fd, Callback callback) {
  Id id = next_id_++;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl");
  watches_[id] = {fd, std::make_shared<Callback>(std::move(callback)), nullptr};
  return id;
}

EventLoop::Id EventLoop::watch(int fd, Callback on_readable) {
  return add(fd, std::move(on_readable));
}

void EventLoop::set_on_writable(Id id, Callback on_writable, bool readable) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  epoll_event ev{};
  ev.events = (readable ? EPOLLIN : 0u) | (on_writable ? EPOLLOUT : 0u);
  ev.data.u64 = id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->second.fd, &ev) != 0) fail("epoll_ctl");
  it->second.on_writable =
      on_writable ? std::make_shared<Callback>(std::move(on_writable)) : nullptr;
}

void EventLoop::unwatch(Id id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  watches_.erase(it);
  if (auto t = timers_.find(id); t != timers_.end()) {
    ::close(t->second);
    timers_.erase(t);
  }
}

EventLoop::Id EventLoop::add_timer(Callback on_expiry) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd < 0) fail("timerfd_create");
  Id id;
  try {
    id = add(fd, [fd, cb = std::move(on_expiry)] {
      uint64_t expirations;
      (void)!::read(fd, &expirations, sizeof expirations);
      cb();
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  timers_[id] = fd;
  return id;
}

void EventLoop::arm_at(Id timer, std::optional<TimePoint> at) {
  auto it = timers_.find(timer);
  if (it == timers_.end()) return;
  itimerspec spec{};
  if (at) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(at->time_since_epoch()).count();
    if (ns <= 0) ns = 1;  // zero would disarm
    spec.it_value.tv_sec = ns / 1000000000;
    spec.it_value.tv_nsec = ns % 1000000000;
  }
  timerfd_settime(it->second, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void EventLoop::arm_every(Id timer, std::chrono::nanoseconds period) {
  auto it = timers_.find(timer);
  if (it == timers_.end()) return;
  itimerspec spec{};
  spec.it_interval.tv_sec = period.count() / 1000000000;
  spec.it_interval.tv_nsec = period.count() % 1000000000;
  spec.it_value = spec.it_interval;
  timerfd_settime(it->second, 0, &spec, nullptr);
}

void EventLoop::on_signals(std::initializer_list<int> signals, std::function<void(int)> on_signal) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0 ||
      (signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
    fail("signalfd");
  add(signal_fd_, [this, cb = std::move(on_signal)] {
    signalfd_siginfo si{};
    if (::read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
      cb(static_cast<int>(si.ssi_signo));
  });
}

void EventLoop::run() {
  epoll_event events[64];
  while (!stop_) {
    int n = epoll_wait(epoll_fd_, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("epoll_wait");
    }
    for (int i = 0; i < n && !stop_; ++i) {
      const Id id = events[i].data.u64;
      auto it = watches_.find(id);
      if (it == watches_.end()) continue;  // removed earlier in this batch
      if ((events[i].events & EPOLLOUT) && it->second.on_writable) {
        auto w = it->second.on_writable;  // it may remove its own watch
        (*w)();
        it = watches_.find(id);
        // Writable and nothing else: the readable callback has nothing to read.
        if (it == watches_.end() || events[i].events == EPOLLOUT) continue;
      }
      auto cb = it->second.callback;  // the callback may remove its own watch
      (*cb)();
    }
    if (after_batch_) after_batch_();
  }
  stop_ = false;  // a later run() runs again
}

}  // namespace gpreempt
