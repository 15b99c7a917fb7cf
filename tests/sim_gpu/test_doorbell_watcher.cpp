// sim/gpu/doorbell_watcher: a doorbell store followed by a wake of its futex, made through another
// mapping of the same memfd (as the client's mapping and kfdsimd's are), makes fd() readable.
#include "sim/gpu/doorbell_watcher.h"

#include <gtest/gtest.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

namespace {

using gpreempt::sim::gpu::DoorbellWatcher;

// Two shared mappings of one doorbell page: the daemon's (watched) and the process's (rung).
struct Page {
  int fd = -1;
  void* daemon = nullptr;
  void* process = nullptr;
  Page() {
    fd = memfd_create("doorbells", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, 8192), 0);
    daemon = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    process = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ~Page() {
    munmap(daemon, 8192);
    munmap(process, 8192);
    close(fd);
  }
  const volatile uint32_t* watched(int doorbell) const {
    return reinterpret_cast<const volatile uint32_t*>(static_cast<char*>(daemon) + doorbell * 8);
  }
  void ring(int doorbell, uint64_t value, bool wake) {
    auto* d = reinterpret_cast<volatile uint64_t*>(static_cast<char*>(process) + doorbell * 8);
    *d = value;
    if (wake) syscall(SYS_futex, const_cast<uint64_t*>(d), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  }
};

bool readable(const DoorbellWatcher& w, int timeout_ms) {
  pollfd p{w.fd(), POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

TEST(DoorbellWatcher, AWakeOfAWatchedDoorbellMakesItsDescriptorReadable) {
  Page page;
  DoorbellWatcher w;
  w.watch({page.watched(0), page.watched(3)});
  // Every ring wakes it, whichever doorbell and however often (the fd drained in between).
  for (uint64_t i = 1; i <= 3; ++i) {
    page.ring(3, i, true);
    // The bound only ends a failing test; a working watcher answers in microseconds.
    ASSERT_TRUE(readable(w, 10000)) << "ring " << i << " did not wake the watcher";
    w.drain();
  }
  page.ring(0, 1, true);
  EXPECT_TRUE(readable(w, 10000));
}

TEST(DoorbellWatcher, ANewSetReplacesTheOldOne) {
  Page page;
  DoorbellWatcher w;
  w.watch({page.watched(1)});
  w.watch({page.watched(2)});
  EXPECT_EQ(w.watched(), 1u);
  page.ring(2, 7, true);
  EXPECT_TRUE(readable(w, 10000)) << "the doorbell of the new set did not wake the watcher";
  w.drain();
  w.watch({});
  EXPECT_EQ(w.watched(), 0u);
}

}  // namespace
