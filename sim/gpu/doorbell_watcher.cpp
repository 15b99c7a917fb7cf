#include "sim/gpu/doorbell_watcher.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "common/error.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

namespace gpreempt::sim::gpu {

namespace {

// The uapi's struct futex_waitv and flags (linux/futex.h of Linux >= 5.16; older headers lack them).
struct FutexWaitv {
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t reserved;
};
constexpr uint32_t kFutex2SizeU32 = 0x02;
constexpr uint32_t kFutex2Private = 128;
// FUTEX_WAITV_MAX is 128; one entry is the control word.
constexpr std::size_t kMaxDoorbells = 127;

uint64_t address_of(const volatile void* p) { return reinterpret_cast<uint64_t>(p); }

}  // namespace

DoorbellWatcher::DoorbellWatcher() {
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) throw gpreempt::Error(errno, "eventfd for the doorbell watcher");
  // The thread takes no signals: kfdsimd reads its own through a signalfd, which works only while
  // every thread blocks them (a SIGTERM delivered here would kill the daemon without its orderly
  // stop). Started with all blocked, so there is no window before it could block them itself.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

DoorbellWatcher::~DoorbellWatcher() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  interrupt();
  thread_.join();
  ::close(event_fd_);
}

void DoorbellWatcher::drain() {
  uint64_t n;
  while (::read(event_fd_, &n, sizeof n) == static_cast<ssize_t>(sizeof n)) {
  }
}

void DoorbellWatcher::watch(std::vector<const volatile uint32_t*> words) {
  if (words.size() > kMaxDoorbells) words.resize(kMaxDoorbells);
  {
    std::lock_guard lk(mu_);
    words_.clear();
    // A ring from now on differs from the value seen here, whether the thread is waiting already
    // or reads the set later.
    for (const volatile uint32_t* p : words) words_.push_back({p, *p});
  }
  interrupt();
}

std::size_t DoorbellWatcher::watched() const {
  std::lock_guard lk(mu_);
  return words_.size();
}

void DoorbellWatcher::interrupt() {
  control_.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, &control_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void DoorbellWatcher::run() {
  std::vector<FutexWaitv> w;
  const uint64_t one = 1;
  for (;;) {
    uint32_t control;
    bool rang = false;
    w.clear();
    {
      // The doorbell words are read under mu_ only, so watch() can promise that the previous
      // ones are no longer read once it has returned. The kernel reads them again in
      // futex_waitv, where a page unmapped meanwhile gives EFAULT, not a crash.
      std::lock_guard lk(mu_);
      if (stop_) return;
      control = control_.load(std::memory_order_acquire);
      w.push_back({control, address_of(&control_), kFutex2SizeU32 | kFutex2Private, 0});
      for (Word& d : words_) {
        const uint32_t v = *d.at;
        // A store is a ring whether its wake found us waiting, or came while we were not (then
        // futex_waitv would wait for a value that has already changed).
        rang |= v != d.seen;
        d.seen = v;
        w.push_back({v, address_of(d.at), kFutex2SizeU32, 0});
      }
    }
    if (rang) (void)!::write(event_fd_, &one, sizeof one);
    const long r = syscall(SYS_futex_waitv, w.data(), static_cast<unsigned>(w.size()), 0u, nullptr,
                           CLOCK_MONOTONIC);
    // Woken (by a ring or a new set), or a value changed since it was read: look again.
    if (r >= 0 || errno == EAGAIN) continue;
    if (errno == EINTR) continue;
    if (errno == EFAULT) {
      // A page went away between the read and the wait; watch() is about to give a new set.
      const timespec ms{0, 1000000};
      syscall(SYS_futex, &control_, FUTEX_WAIT_PRIVATE, control, &ms, nullptr, 0);
      continue;
    }
    return;  // ENOSYS (a kernel before 5.16) or EINVAL: the poll alone sees dispatches
  }
}

}  // namespace gpreempt::sim::gpu
