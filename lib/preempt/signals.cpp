#include "preempt/signals.h"

#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

namespace gpreempt::preempt {

namespace {

constexpr int kSlots = 16;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

struct Slot {
  std::atomic<pid_t> owner{0};  // the process that registered it: a forked child inherits slots
  std::atomic<int> notify_fd{-1};
  std::atomic<int> done_fd{-1};
};
Slot g_slots[kSlots];
struct sigaction g_previous[NSIG];
std::atomic<bool> g_installed_for[NSIG];
std::mutex g_install_mutex;
bool g_installed = false;

long elapsed_ms(const timespec& t0) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
}

void handler(int sig, siginfo_t* info, void* uctx) {
  const int saved_errno = errno;
  const char byte = static_cast<char>(sig);
  int waiting[kSlots];
  int n = 0;
  const pid_t self = ::getpid();
  for (auto& s : g_slots) {
    int fd = s.notify_fd.load(std::memory_order_acquire);
    if (fd < 0) continue;
    // In a forked child the pipes lead to the parent's control thread: waking it would resume
    // the parent's targets for a signal the parent never got, and no one would answer us.
    if (s.owner.load(std::memory_order_acquire) != self) continue;
    int done = s.done_fd.load(std::memory_order_acquire);
    // A byte left by an answer that came after an earlier wait timed out would end this wait
    // before the targets are resumed: drain before asking.
    char stale;
    if (done >= 0)
      while (::read(done, &stale, 1) == 1) {
      }
    if (::write(fd, &byte, 1) == 1 && done >= 0) waiting[n++] = done;
  }
  // Async-signal-safe wait: poll() each done pipe until the deadline.
  timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; ++i) {
    for (;;) {
      long left = kSignalResumeTimeoutMs - elapsed_ms(t0);
      if (left <= 0) break;
      pollfd p{waiting[i], POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r > 0) {
        char c;
        while (::read(waiting[i], &c, 1) == 1) {
        }
        break;
      }
      if (r == 0) break;
      if (errno != EINTR) break;
    }
  }
  const struct sigaction& prev = g_previous[sig];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, uctx);
  } else if (prev.sa_handler == SIG_DFL) {
    // Die of the signal as we would have: default action, re-raise (it is blocked until we return).
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
  } else if (prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  }
  errno = saved_errno;
}

void install_once() {
  std::lock_guard lock(g_install_mutex);
  if (g_installed) return;
  g_installed = true;
  for (int sig : kSignals) {
    struct sigaction old = {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    g_previous[sig] = old;
    struct sigaction act = {};
    act.sa_sigaction = handler;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&act.sa_mask);
    ::sigaction(sig, &act, nullptr);
    g_installed_for[sig].store(true);
  }
}

}  // namespace

int register_signal_slot(SignalSlot slot) {
  install_once();
  std::lock_guard lock(g_install_mutex);
  for (int i = 0; i < kSlots; ++i) {
    int expected = -1;
    if (g_slots[i].notify_fd.load() == -1) {
      g_slots[i].done_fd.store(slot.done_fd, std::memory_order_release);
      g_slots[i].owner.store(::getpid(), std::memory_order_release);
      if (g_slots[i].notify_fd.compare_exchange_strong(expected, slot.notify_fd)) return i;
    }
  }
  return -1;
}

void unregister_signal_slot(int index) {
  if (index < 0 || index >= kSlots) return;
  std::lock_guard lock(g_install_mutex);
  g_slots[index].notify_fd.store(-1, std::memory_order_release);
  g_slots[index].done_fd.store(-1, std::memory_order_release);
}

}  // namespace gpreempt::preempt
