#include "common/child_reaper.h"

#include <signal.h>

#include <atomic>

namespace gpreempt {

namespace {

// Slots of 0 are free. Lock-free because the signal handler reads it.
std::atomic<pid_t> g_children[256];

extern "C" void kill_children_then_die(int sig) {
  for (auto& slot : g_children)
    if (const pid_t target = slot.load(std::memory_order_relaxed); target != 0) ::kill(target, SIGKILL);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

bool track_child(pid_t target) {
  for (auto& slot : g_children) {
    pid_t free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, target)) return true;
  }
  return false;
}

void untrack_child(pid_t target) {
  for (auto& slot : g_children) {
    pid_t expected = target;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void kill_children_on_termination() {
  struct sigaction sa {};
  sa.sa_handler = kill_children_then_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) {
    // An ignored signal stays ignored (a shell starts background jobs with SIGINT ignored).
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace gpreempt
