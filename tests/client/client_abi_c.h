/* Functions of client_abi_c.c, which is compiled as C. */
#pragma once
#include <stdint.h>

#include <gpreempt/client.h>

#ifdef __cplusplus
extern "C" {
#endif
int c_connect_with_timeout(const char* path, uint32_t timeout_ms, gpreempt_client** out);
int c_one_request(gpreempt_client* client, uint64_t* id_out);
/* GPREEMPT_OPTS with .flags (GPREEMPT_CLIENT_REQUIRE_DAEMON) as a C caller writes it. */
int c_connect_requiring_daemon(const char* path, uint32_t timeout_ms, gpreempt_client** out);
/* The stats of `client` through a C caller's struct: 0, or the negative errno. */
int c_stats(gpreempt_client* client, struct gpreempt_client_stats* out);
/* One LLM request as a C caller marks it: begin, its first token, its end with `tokens`. */
int c_one_llm_request(gpreempt_client* client, uint64_t tokens, uint64_t* id_out);
#ifdef __cplusplus
}
#endif
