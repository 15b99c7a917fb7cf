/* gpreemptd_bench_blip: the cheapest GPU process there is, for measuring how fast gpreemptd finds,
 * classifies and forgets GPU processes (classify_latency.py, soak.py). It opens /dev/kfd through
 * simrt (RUNTIME_ENABLE included, as ROCr does), creates one queue, stays HOLD_MS milliseconds,
 * closes everything and exits. It prints one line of wall-clock times (CLOCK_REALTIME, the clock
 * of gpreemptd's log lines), so the bench can compare them with the daemon's own timestamps:
 *
 *   {"pid": P, "open_s": T, "queue_s": T, "close_s": T}
 *
 * open_s is taken just before the open of /dev/kfd, queue_s just after the queue exists, close_s
 * just before the queue and the device are closed. Extra arguments are ignored (they shape the
 * command line a class matches).
 *
 *   gpreemptd_bench_blip HOLD_MS [ignored...]
 *
 * Exit codes: 0 ok, 1 simrt failed (message on stderr), 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "simrt/simrt.h"

static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  char* end = NULL;
  long hold_ms = argc >= 2 ? strtol(argv[1], &end, 10) : -1;
  if (argc < 2 || *end != '\0' || hold_ms < 0) {
    fprintf(stderr, "usage: %s HOLD_MS [ignored...]\n", argv[0]);
    return 2;
  }
  const double open_s = wall_s();
  simrt_runtime* rt = NULL;
  int rc = simrt_open(NULL, &rt);
  if (rc < 0) {
    fprintf(stderr, "%s: cannot open the KFD: %s\n", argv[0], simrt_last_error());
    return 1;
  }
  simrt_queue* q = NULL;
  rc = simrt_queue_create(rt, 7, 0, &q);
  if (rc < 0) {
    fprintf(stderr, "%s: cannot create a queue: %s\n", argv[0], simrt_last_error());
    simrt_close(rt);
    return 1;
  }
  const double queue_s = wall_s();
  struct timespec hold = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
  while (nanosleep(&hold, &hold) != 0) {
  }
  const double close_s = wall_s();
  simrt_queue_destroy(q);
  simrt_close(rt);
  printf("{\"pid\": %d, \"open_s\": %.6f, \"queue_s\": %.6f, \"close_s\": %.6f}\n", (int)getpid(),
         open_s, queue_s, close_s);
  return 0;
}
