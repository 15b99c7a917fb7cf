/* Suspend every GPU queue of a process for a while, then resume it — the C ABI in 40 lines.
 *
 *   gpreempt_example_suspend PID [HOLD_MS]
 *   kfdsim run -- gpreempt_example_suspend PID 500      (without a GPU)
 *
 * Build against an installed gpreempt:  cc suspend_pid.c $(pkg-config --cflags --libs gpreempt)
 */
#include <gpreempt/gpreempt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int check(int rc, const char* what) {
  if (rc < 0) {
    fprintf(stderr, "%s: %s — %s\n", what, gpreempt_strerror(rc), gpreempt_last_error());
    exit(1);
  }
  return rc;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PID [HOLD_MS]\n", argv[0]);
    return 2;
  }
  int pid = atoi(argv[1]);
  long hold_ms = argc > 2 ? atol(argv[2]) : 200;
  gpreempt_ctx* ctx;
  gpreempt_target* target;
  check(gpreempt_ctx_open(NULL, &ctx), "gpreempt_ctx_open");
  check(gpreempt_attach(ctx, pid, &target), "gpreempt_attach");
  int n = check(gpreempt_suspend_process(target, GPREEMPT_GRACE_DEFAULT), "gpreempt_suspend_process");
  printf("suspended %d queue(s) of process %d\n", n, pid);
  struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  n = check(gpreempt_resume_process(target), "gpreempt_resume_process");
  printf("resumed %d queue(s)\n", n);
  check(gpreempt_detach(target), "gpreempt_detach");
  gpreempt_ctx_close(ctx);
  return 0;
}
