/* simrt_smoke: exercises simrt's C API under kfdsim (KFDSIM_HARDWARE=gpu) and prints one
 * "key value" line per property for test_simrt_e2e to check. Exit 1 on any failure. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "simrt/simrt.h"

#define CHECK(expr)                                                                   \
  do {                                                                                \
    int rc_ = (expr);                                                                 \
    if (rc_ != 0) {                                                                   \
      printf("error %s: %d %s\n", #expr, rc_, simrt_last_error());                    \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

static const uint64_t kWait = 20ull * 1000 * 1000 * 1000;

int main(void) {
  simrt_runtime* rt = NULL;
  CHECK(simrt_open(NULL, &rt));
  uint32_t major = 0, minor = 0;
  simrt_kfd_version(rt, &major, &minor);
  printf("version %u.%u\n", major, minor);
  printf("gpu_id %u\n", simrt_gpu_id(rt));

  simrt_queue *q0 = NULL, *q1 = NULL;
  CHECK(simrt_queue_create(rt, 7, 64, &q0));
  CHECK(simrt_queue_create(rt, 12, 64, &q1));
  printf("queues %u %u\n", simrt_queue_id(q0), simrt_queue_id(q1));

  /* A barrier-AND on q1 holds q1's kernel until q0's long kernel signalled. */
  simrt_signal *a, *b, *c;
  CHECK(simrt_signal_create(rt, 1, &a));
  CHECK(simrt_signal_create(rt, 1, &b));
  CHECK(simrt_signal_create(rt, 1, &c));
  simrt_kernel slow = {"slow", {256, 1, 1}, {256, 1, 1}, 20 * 1000 * 1000};
  simrt_kernel fast = {"fast", {512, 1, 1}, {256, 1, 1}, 10 * 1000};
  CHECK(simrt_dispatch(q0, &slow, a));
  simrt_signal* deps[1] = {a};
  CHECK(simrt_barrier_and(q1, deps, 1, b));
  CHECK(simrt_dispatch(q1, &fast, c));
  CHECK(simrt_signal_wait_eq(c, 0, kWait));
  printf("barrier_order %d\n", simrt_signal_start_ts(c) >= simrt_signal_end_ts(a));
  printf("barrier_signal %lld\n", (long long)simrt_signal_load(b));

  /* In order on one queue; one signal counted down by three packets. */
  simrt_signal* s[3];
  simrt_signal* all;
  CHECK(simrt_signal_create(rt, 3, &all));
  for (int i = 0; i < 3; ++i) {
    CHECK(simrt_signal_create(rt, 1, &s[i]));
    CHECK(simrt_dispatch(q0, &fast, s[i]));
  }
  for (int i = 0; i < 3; ++i) CHECK(simrt_dispatch(q1, &fast, all));
  for (int i = 0; i < 3; ++i) CHECK(simrt_signal_wait_eq(s[i], 0, kWait));
  CHECK(simrt_signal_wait_eq(all, 0, kWait));
  int in_order = 1;
  for (int i = 1; i < 3; ++i) in_order &= simrt_signal_start_ts(s[i]) >= simrt_signal_end_ts(s[i - 1]);
  printf("in_order %d\n", in_order);
  printf("countdown %lld\n", (long long)simrt_signal_load(all));

  /* More packets than ring slots: the producer waits for the CP to hand slots back. */
  simrt_signal* many;
  CHECK(simrt_signal_create(rt, 200, &many));
  for (int i = 0; i < 200; ++i) CHECK(simrt_dispatch(q0, &fast, many));
  CHECK(simrt_signal_wait_eq(many, 0, kWait));
  printf("ring_wrapped 1\n");

  /* The completion bell (sim/gpu/aql.h): the last 64-bit slot of this process's doorbell frame,
   * which the simulated GPU counts up after writing completion signals. The KFD keeps one
   * process per process, so a second /dev/kfd descriptor maps the same frame. */
  {
    int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    const uint64_t frame = (3ull << 62) | ((uint64_t)simrt_gpu_id(rt) << 46);
    void* m = kfd < 0 ? MAP_FAILED : mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, kfd, (off_t)frame);
    printf("bell_rung %d\n", m != MAP_FAILED && *(volatile uint32_t*)((char*)m + 1023 * 8) != 0);
    if (m != MAP_FAILED) munmap(m, 8192);
    if (kfd >= 0) close(kfd);
  }

  printf("timeout_rc %d\n", simrt_signal_wait_eq(a, 5, 1000 * 1000));
  /* Every packet that writes them has completed: the signals can go (LeakSanitizer checks). */
  simrt_signal* created[] = {a, b, c, s[0], s[1], s[2], all, many};
  for (size_t i = 0; i < sizeof created / sizeof created[0]; ++i) simrt_signal_destroy(created[i]);
  CHECK(simrt_queue_destroy(q0));
  /* q1 is left to simrt_close, which destroys it before disabling the runtime. */
  simrt_close(rt);
  printf("dispatch_after_close %d\n", simrt_dispatch(q1, &fast, NULL));
  CHECK(simrt_queue_destroy(q1));
  printf("closed\n");
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin)) return 1; /* the test looks at the machine meanwhile */
  printf("ok\n");
  return 0;
}
