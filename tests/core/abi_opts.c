/* The libbpf-style growth rules of the C ABI, compiled as C (the language most callers use):
 * GPREEMPT_OPTS zeroes the struct and sets sz; an older caller's smaller struct is accepted; a
 * newer caller's larger struct is accepted when the fields this library does not know are zero and
 * refused with -E2BIG otherwise; a size inside the `sz` field itself is -EINVAL. Also: an errno
 * from the clock query cannot become a grace period. No device needed: every call here fails (or
 * passes validation) before touching /dev/kfd. Exit 0 when every check holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpreempt/gpreempt.h"
#include "gpreempt/inspect.h"

static int failures;
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #cond, \
              gpreempt_last_error());                                            \
      ++failures;                                                                \
    }                                                                            \
  } while (0)

/* No options struct has padding: an initializer zeroes every member, while padding copied out of
 * a compound literal (GPREEMPT_OPTS) may hold garbage, which the library reads as a field of a newer
 * version. GCC at -O0 does copy it. */
#define END_OF(type, field) (offsetof(struct type, field) + sizeof(((struct type*)0)->field))
_Static_assert(sizeof(struct gpreempt_ctx_opts) == END_OF(gpreempt_ctx_opts, flags), "padding");
_Static_assert(sizeof(struct gpreempt_attach_opts) == END_OF(gpreempt_attach_opts, reserved), "padding");
_Static_assert(sizeof(struct gpreempt_suspend_opts) == END_OF(gpreempt_suspend_opts, reserved), "padding");
_Static_assert(sizeof(struct gpreempt_queue_map_opts) == END_OF(gpreempt_queue_map_opts, reserved),
               "padding");

/* A newer caller's struct: this library's fields, then one it does not know. */
struct newer_ctx_opts {
  struct gpreempt_ctx_opts known;
  uint64_t future;
};
struct newer_suspend_opts {
  struct gpreempt_suspend_opts known;
  uint64_t future;
};
struct newer_attach_opts {
  struct gpreempt_attach_opts known;
  uint64_t future;
};
struct newer_map_opts {
  struct gpreempt_queue_map_opts known;
  uint64_t future;
};

int main(void) {
  /* The macro: every byte zero, sz set, the named fields given. */
  {
    GPREEMPT_OPTS(gpreempt_ctx_opts, o, .watchdog_ms = 7);
    CHECK(o.sz == sizeof(struct gpreempt_ctx_opts));
    CHECK(o.watchdog_ms == 7);
    CHECK(o.device_path == NULL && o.flags == 0);
  }
  gpreempt_ctx* ctx = (gpreempt_ctx*)0x1;
  gpreempt_ctx* const sentinel = ctx;

  /* ctx_open: current size accepted (then fails on the missing device). */
  {
    GPREEMPT_OPTS(gpreempt_ctx_opts, o, .device_path = "/nonexistent/kfd");
    CHECK(gpreempt_ctx_open(&o, &ctx) == -ENOENT);
    CHECK(ctx == sentinel);
  }
  /* An older caller whose struct ends after device_path: accepted, watchdog_ms is absent. */
  {
    GPREEMPT_OPTS(gpreempt_ctx_opts, o, .device_path = "/nonexistent/kfd");
    o.sz = offsetof(struct gpreempt_ctx_opts, device_path) + sizeof(o.device_path);
    CHECK(gpreempt_ctx_open(&o, &ctx) == -ENOENT);
  }
  /* A newer caller: zero tail accepted, non-zero tail refused with E2BIG before anything. */
  {
    struct newer_ctx_opts n;
    memset(&n, 0, sizeof n);
    n.known.sz = sizeof n;
    n.known.device_path = "/nonexistent/kfd";
    CHECK(gpreempt_ctx_open(&n.known, &ctx) == -ENOENT);
    n.future = 1;
    CHECK(gpreempt_ctx_open(&n.known, &ctx) == -E2BIG);
    CHECK(strstr(gpreempt_last_error(), "does not know") != NULL);
    CHECK(ctx == sentinel);
  }
  /* sz smaller than the sz field: EINVAL. */
  {
    GPREEMPT_OPTS(gpreempt_ctx_opts, o);
    o.sz = 2;
    CHECK(gpreempt_ctx_open(&o, &ctx) == -EINVAL);
  }
  /* attach_opts: options are validated first (a NULL context then gives EINVAL). */
  {
    gpreempt_target* t = NULL;
    struct newer_attach_opts n;
    memset(&n, 0, sizeof n);
    n.known.sz = sizeof n;
    CHECK(gpreempt_attach_opts(NULL, 1, &n.known, &t) == -EINVAL);
    n.future = 1;
    CHECK(gpreempt_attach_opts(NULL, 1, &n.known, &t) == -E2BIG);
    GPREEMPT_OPTS(gpreempt_attach_opts, bad, .flags = 1u << 7);
    CHECK(gpreempt_attach_opts(NULL, 1, &bad, &t) == -EINVAL);
    CHECK(strstr(gpreempt_last_error(), "unknown bits") != NULL);
    /* The named former padding: zero from the macro, and refused when set. */
    GPREEMPT_OPTS(gpreempt_attach_opts, reserved);
    CHECK(reserved.reserved == 0);
    reserved.reserved = 1;
    CHECK(gpreempt_attach_opts(NULL, 1, &reserved, &t) == -E2BIG);
    CHECK(t == NULL);
  }
  /* suspend_opts: the same order. */
  {
    struct newer_suspend_opts n;
    memset(&n, 0, sizeof n);
    n.known.sz = sizeof n;
    n.known.grace_us = 100;
    CHECK(gpreempt_suspend_opts(NULL, NULL, 0, NULL, &n.known) == -EINVAL);
    n.future = 1;
    CHECK(gpreempt_suspend_opts(NULL, NULL, 0, NULL, &n.known) == -E2BIG);
    /* An older caller that knows only sz and grace_us. */
    GPREEMPT_OPTS(gpreempt_suspend_opts, old, .grace_us = 100);
    old.sz = offsetof(struct gpreempt_suspend_opts, grace_us) + sizeof(old.grace_us);
    CHECK(gpreempt_suspend_opts(NULL, NULL, 0, NULL, &old) == -EINVAL); /* NULL target */
    CHECK(strstr(gpreempt_last_error(), "target is NULL") != NULL);
  }
  /* queue_map_opts: pure, so an accepted struct produces a document. */
  {
    static const char mqds[] = "";
    char* json = NULL;
    GPREEMPT_OPTS(gpreempt_queue_map_opts, o, .mqds = mqds);
    CHECK(gpreempt_queue_map_opts(&o, &json) >= 0);
    CHECK(json != NULL && strstr(json, "\"queues\"") != NULL);
    gpreempt_free(json);
    json = NULL;
    struct newer_map_opts n;
    memset(&n, 0, sizeof n);
    n.known.sz = sizeof n;
    n.known.mqds = mqds;
    CHECK(gpreempt_queue_map_opts(&n.known, &json) >= 0);
    gpreempt_free(json);
    json = NULL;
    n.future = 0xff;
    CHECK(gpreempt_queue_map_opts(&n.known, &json) == -E2BIG);
    CHECK(json == NULL);
    /* An older caller without `pid` (sz ends after log): every process. */
    GPREEMPT_OPTS(gpreempt_queue_map_opts, old, .mqds = mqds, .pid = 77);
    old.sz = offsetof(struct gpreempt_queue_map_opts, log) + sizeof(old.log);
    CHECK(gpreempt_queue_map_opts(&old, &json) >= 0);
    gpreempt_free(json);
    GPREEMPT_OPTS(gpreempt_queue_map_opts, neg, .mqds = mqds, .pid = -3);
    CHECK(gpreempt_queue_map_opts(&neg, &json) == -EINVAL);
  }
  /* An errno from the old clock query is not a clock. */
  {
    const int err = gpreempt_gpu_clock_mhz(0xfffffu); /* no such GPU here: a negative errno */
    CHECK(err < 0);
    CHECK(gpreempt_grace_from_us(100, (uint32_t)err) == GPREEMPT_GRACE_DEFAULT);
    CHECK(strstr(gpreempt_last_error(), "not a GPU clock") != NULL);
    CHECK(gpreempt_grace_from_us(100, 2100) == 210u);
    CHECK(gpreempt_last_error()[0] == '\0');
    uint32_t mhz = 12345;
    CHECK(gpreempt_gpu_max_clock_mhz(0xfffffu, &mhz) < 0);
    CHECK(mhz == 12345); /* unchanged on failure */
    CHECK(gpreempt_gpu_max_clock_mhz(1, NULL) == -EINVAL);
  }
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
