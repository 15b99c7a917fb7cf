/* Functions of client_abi_c.c, which is compiled as C. */
#pragma once
#include <stdint.h>

#include <gpreempt/client.h>

#ifdef __cplusplus
extern "C" {
#endif
int c_connect_with_timeout(const char* path, uint32_t timeout_ms, gpreempt_client** out);
int c_one_request(gpreempt_client* client, uint64_t* id_out);
#ifdef __cplusplus
}
#endif
