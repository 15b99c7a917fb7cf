/* A scriptable controller on the C ABI only (plain C: proves gpreempt.h is a C header), used by
 * the integration tests. One command per stdin line, one answer line per command:
 *   attach PID | attach-require PID | list | suspend all [GRACE] | suspend ID... | resume all |
 *   resume ID... | notice | stats | watchdog | detach | close | exit
 * (attach-require: gpreempt_attach_opts with GPREEMPT_ATTACH_REQUIRE_QUEUES; watchdog: the bound
 * in effect, from gpreempt_stats.watchdog_ms)
 * stats answers: suspend_calls resume_calls watchdog_resumes forced_disables signals_handled
 * own_sigterm_seen.
 * Answers: "ok ..." or "err <errno> <detail>". Options: --watchdog-ms N, --no-signals, --own-sigterm,
 * --null-opts (gpreempt_ctx_open(NULL, ...): every default). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpreempt/gpreempt.h"

static gpreempt_ctx* ctx;
static volatile sig_atomic_t own_sigterm_seen;
static void on_sigterm(int sig) { (void)sig; own_sigterm_seen = 1; }
static gpreempt_target* target;

static void fail(int rc) { printf("err %d %s\n", -rc, gpreempt_last_error()); }

/* Reads one command line from stdin into line (NUL-terminated, newline kept); 0 at end of input.
 * The tests send SIGTERM while the controller waits here and expect the library's handler to run
 * at once. It waits in poll(), not in fgets()/read(): ThreadSanitizer defers an asynchronous
 * signal until the thread enters a call it knows to block, and GCC 12's runtime knows poll() but
 * not read() (LLVM marked read() blocking only in 2024, llvm-project#77789) nor any stdio call.
 * Blocked in fgets(), the handler would run only once the next command arrived (docs/testing.md).
 * Without TSan the two ways are the same. */
static int next_line(char* line, size_t cap) {
  static char buf[4096];
  static size_t have;
  for (;;) {
    char* nl = memchr(buf, '\n', have);
    if (nl || have == sizeof buf) {
      size_t n = nl ? (size_t)(nl - buf) + 1 : have;
      if (n > cap - 1) n = cap - 1;
      memcpy(line, buf, n);
      line[n] = 0;
      memmove(buf, buf + n, have - n);
      have -= n;
      return 1;
    }
    struct pollfd p = {0, POLLIN, 0};
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    ssize_t got = read(0, buf + have, sizeof buf - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (have == 0) return 0;
      buf[have++] = '\n';  /* a last line without its newline still counts, as with fgets() */
      continue;
    }
    have += (size_t)got;
  }
}

static int parse_ids(char* rest, uint32_t* ids, int max) {
  int n = 0;
  for (char* tok = strtok(rest, " \n"); tok && n < max; tok = strtok(NULL, " \n"))
    ids[n++] = (uint32_t)strtoul(tok, NULL, 10);
  return n;
}

int main(int argc, char** argv) {
  GPREEMPT_OPTS(gpreempt_ctx_opts, opts);
  int null_opts = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--null-opts")) null_opts = 1;
    if (!strcmp(argv[i], "--watchdog-ms") && i + 1 < argc) opts.watchdog_ms = (uint32_t)atoi(argv[++i]);
    if (!strcmp(argv[i], "--no-signals")) opts.flags |= GPREEMPT_CTX_NO_SIGNAL_HANDLERS;
    /* A handler of our own that does not exit: the library must chain to it. */
    if (!strcmp(argv[i], "--own-sigterm")) signal(SIGTERM, on_sigterm);
  }
  int rc = gpreempt_ctx_open(null_opts ? NULL : &opts, &ctx);
  if (rc < 0) {
    fail(rc);
    return 1;
  }
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  char line[4096];
  while (next_line(line, sizeof line)) {
    char cmd[32] = "";
    int used = 0;
    sscanf(line, "%31s %n", cmd, &used);
    char* rest = line + used;
    uint32_t ids[256], status[256];
    if (!strcmp(cmd, "attach")) {
      rc = gpreempt_attach(ctx, atoi(rest), &target);
      if (rc < 0) fail(rc); else printf("ok 0\n");
    } else if (!strcmp(cmd, "attach-require")) {
      GPREEMPT_OPTS(gpreempt_attach_opts, aopts, .flags = GPREEMPT_ATTACH_REQUIRE_QUEUES);
      rc = gpreempt_attach_opts(ctx, atoi(rest), &aopts, &target);
      if (rc < 0) fail(rc); else printf("ok 0\n");
    } else if (!strcmp(cmd, "watchdog")) {
      GPREEMPT_OPTS(gpreempt_stats, s);
      rc = gpreempt_get_stats(ctx, &s);
      if (rc < 0) fail(rc); else printf("ok %llu\n", (unsigned long long)s.watchdog_ms);
    } else if (!strcmp(cmd, "list")) {
      struct gpreempt_queue q[256];
      rc = gpreempt_list_queues(target, q, 256);
      if (rc < 0) {
        fail(rc);
      } else {
        printf("ok %d", rc);
        for (int i = 0; i < rc && i < 256; ++i) printf(" %u:%u", q[i].queue_id, q[i].suspended);
        printf("\n");
      }
    } else if (!strcmp(cmd, "suspend") || !strcmp(cmd, "resume")) {
      int suspend = !strcmp(cmd, "suspend");
      if (!strncmp(rest, "all", 3)) {
        uint32_t grace = GPREEMPT_GRACE_DEFAULT;
        if (strlen(rest) > 4) grace = (uint32_t)strtoul(rest + 4, NULL, 10);
        rc = suspend ? gpreempt_suspend_process(target, grace) : gpreempt_resume_process(target);
        if (rc < 0) fail(rc); else printf("ok %d\n", rc);
      } else {
        int n = parse_ids(rest, ids, 256);
        rc = suspend ? gpreempt_suspend_queues(target, ids, (uint32_t)n, 0, status)
                     : gpreempt_resume_queues(target, ids, (uint32_t)n, status);
        if (rc < 0) {
          fail(rc);
        } else {
          printf("ok %d", rc);
          for (int i = 0; i < n; ++i) printf(" %u", status[i]);
          printf("\n");
        }
      }
    } else if (!strcmp(cmd, "notice")) {
      char buf[1024];
      int32_t pid = 0;
      rc = gpreempt_take_notice(ctx, &pid, buf, sizeof buf);
      if (rc < 0) fail(rc); else printf("ok %d %s\n", rc, rc ? buf : "");
    } else if (!strcmp(cmd, "stats")) {
      struct gpreempt_stats s;
      memset(&s, 0, sizeof s);
      s.sz = sizeof s;
      rc = gpreempt_get_stats(ctx, &s);
      if (rc < 0) fail(rc);
      else printf("ok %llu %llu %llu %llu %llu %d\n", (unsigned long long)s.suspend_calls,
                  (unsigned long long)s.resume_calls, (unsigned long long)s.watchdog_resumes,
                  (unsigned long long)s.forced_disables, (unsigned long long)s.signals_handled,
                  (int)own_sigterm_seen);
    } else if (!strcmp(cmd, "detach")) {
      rc = gpreempt_detach(target);
      target = NULL;
      if (rc < 0) fail(rc); else printf("ok 0\n");
    } else if (!strcmp(cmd, "close")) {
      gpreempt_ctx_close(ctx);
      ctx = NULL;
      printf("ok 0\n");
    } else if (!strcmp(cmd, "exit")) {
      break;
    } else {
      printf("err 22 unknown command %s\n", cmd);
    }
    fflush(stdout);
  }
  if (ctx) gpreempt_ctx_close(ctx);
  return 0;
}
