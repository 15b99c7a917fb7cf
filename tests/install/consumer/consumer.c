/* Uses the installed header and library: the version the header promises is the library's. */
#include <errno.h>
#include <gpreempt/gpreempt.h>
#include <stdio.h>

int main(void) {
  uint32_t v = gpreempt_version();
  uint32_t want = (GPREEMPT_VERSION_MAJOR << 16) | (GPREEMPT_VERSION_MINOR << 8) | GPREEMPT_VERSION_PATCH;
  if (v != want) {
    fprintf(stderr, "header says %x, library says %x\n", want, v);
    return 1;
  }
  gpreempt_ctx* ctx = NULL;
  struct gpreempt_ctx_opts opts = {sizeof opts, "/nonexistent/kfd", 0, 0};
  int rc = gpreempt_ctx_open(&opts, &ctx);
  if (rc != -ENOENT || ctx != NULL) {
    fprintf(stderr, "expected -ENOENT, got %d (%s)\n", rc, gpreempt_last_error());
    return 1;
  }
  printf("gpreempt %s ok: %s\n", gpreempt_version_string(), gpreempt_strerror(rc));
  return 0;
}
