/* client.h compiled as C (the language most callers use): GPREEMPT_OPTS over gpreempt_client_opts
 * and the calls as a C program writes them. test_client_capi.cpp drives these functions. */
#include "client_abi_c.h"

#include <gpreempt/client.h>

int c_connect_with_timeout(const char* path, uint32_t timeout_ms, gpreempt_client** out) {
  GPREEMPT_OPTS(gpreempt_client_opts, opts, .timeout_ms = timeout_ms);
  return gpreempt_client_connect(path, &opts, out);
}

int c_one_request(gpreempt_client* client, uint64_t* id_out) {
  uint64_t id = 0;
  int err = gpreempt_client_request_begin(client, &id);
  if (err) return err;
  *id_out = id;
  return gpreempt_client_request_end(client, id);
}

int c_connect_requiring_daemon(const char* path, uint32_t timeout_ms, gpreempt_client** out) {
  GPREEMPT_OPTS(gpreempt_client_opts, opts, .timeout_ms = timeout_ms,
                .flags = GPREEMPT_CLIENT_REQUIRE_DAEMON);
  return gpreempt_client_connect(path, &opts, out);
}

int c_stats(gpreempt_client* client, struct gpreempt_client_stats* out) {
  struct gpreempt_client_stats s = {.sz = sizeof(s)};
  int err = gpreempt_client_get_stats(client, &s);
  if (err) return err;
  *out = s;
  return 0;
}

int c_one_llm_request(gpreempt_client* client, uint64_t tokens, uint64_t* id_out) {
  uint64_t id = 0;
  int err = gpreempt_client_request_begin(client, &id);
  if (err) return err;
  *id_out = id;
  err = gpreempt_client_request_token(client, id, 1);
  if (err) return err;
  return gpreempt_client_request_end_tokens(client, id, tokens);
}
