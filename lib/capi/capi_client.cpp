// The gpreemptd client C ABI (include/gpreempt/client.h) over client::HintClient, which fails open
// unless GPREEMPT_CLIENT_REQUIRE_DAEMON is set. Every entry point catches every exception; a mutex
// per client serialises calls from several threads.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "capi_error.h"
#include "capi_opts.h"
#include "client/connection.h"
#include "client/hint_client.h"
#include "common/error.h"
#include "gpreempt/client.h"

using gpreempt::Error;
using gpreempt::capi::fail;
using gpreempt::capi::guarded;

static_assert(std::chrono::milliseconds(GPREEMPT_CLIENT_TIMEOUT_DEFAULT_MS) ==
                  gpreempt::client::kDefaultCallTimeout,
              "the C ABI and the client library must agree on the default timeout");

struct gpreempt_client {
  std::mutex mutex;
  gpreempt::client::HintClient hints;
  uint64_t next_auto_id = 1;
};

namespace {

constexpr uint64_t kAutoIdBit = uint64_t{1} << 63;

// Copies `s` into a fixed char array, truncated and NUL-terminated.
template <std::size_t N>
void copy_text(char (&dst)[N], const std::string& s) {
  const std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

}  // namespace

extern "C" {

int gpreempt_client_connect(const char* path, const struct gpreempt_client_opts* opts_in,
                            gpreempt_client** out) {
  return guarded([&] {
    if (!out) return fail(EINVAL, "out is NULL");
    const auto opts = gpreempt::capi::read_opts(
        opts_in, GPREEMPT_OFFSETOFEND(gpreempt_client_opts, flags), "gpreempt_client_opts");
    uint32_t timeout_ms = GPREEMPT_CLIENT_TIMEOUT_DEFAULT_MS;
    if (GPREEMPT_OPTS_HAS(opts, timeout_ms) && opts.timeout_ms != 0) timeout_ms = opts.timeout_ms;
    const uint32_t flags = GPREEMPT_OPTS_HAS(opts, flags) ? opts.flags : 0;
    if (flags & ~uint32_t{GPREEMPT_CLIENT_REQUIRE_DAEMON}) {
      return fail(EINVAL, "gpreempt_client_opts.flags has unknown bits " + std::to_string(flags));
    }
    gpreempt::client::HintClientOptions o;
    o.path = path ? path : "";
    o.timeout = std::chrono::milliseconds(timeout_ms);
    o.require_daemon = (flags & GPREEMPT_CLIENT_REQUIRE_DAEMON) != 0;
    auto* c = new gpreempt_client{{}, gpreempt::client::HintClient(std::move(o)), 1};
    *out = c;
    return 0;
  });
}

void gpreempt_client_close(gpreempt_client* client) { delete client; }

int gpreempt_client_hello(gpreempt_client* client, struct gpreempt_client_info* out) {
  return guarded([&] {
    if (!client || !out) return fail(EINVAL, "client or out is NULL");
    const std::size_t sz = out->sz;
    if (sz < sizeof(std::size_t)) {
      return fail(EINVAL, "gpreempt_client_info.sz is " + std::to_string(sz) +
                              "; set it to sizeof(struct gpreempt_client_info)");
    }
    gpreempt::client::HelloInfo info;
    {
      std::lock_guard lock(client->mutex);
      info = client->hints.call([](auto& conn) { return conn.hello(); });
    }
    gpreempt_client_info full{};
    full.sz = sz;
    full.pid = info.pid;
    full.flags = info.may_preempt ? uint32_t{GPREEMPT_CLIENT_MAY_PREEMPT} : 0u;
    copy_text(full.class_name, info.class_name.value_or(""));
    copy_text(full.daemon_version, info.daemon_version);
    copy_text(full.reason, info.reason);
    // Only the bytes the caller's struct has: an older caller's smaller struct stays intact.
    std::memcpy(static_cast<void*>(out), &full, sz < sizeof(full) ? sz : sizeof(full));
    return 0;
  });
}

int gpreempt_client_request_begin(gpreempt_client* client, uint64_t* request_id) {
  return guarded([&] {
    if (!client || !request_id) return fail(EINVAL, "client or request_id is NULL");
    uint64_t id = *request_id;
    if (id & kAutoIdBit) {
      return fail(EINVAL, "request id " + std::to_string(id) +
                              " has bit 63 set, which is reserved for ids the library chooses");
    }
    std::lock_guard lock(client->mutex);
    if (id == 0) id = kAutoIdBit | client->next_auto_id++;
    client->hints.begin(id);
    *request_id = id;
    return 0;
  });
}

int gpreempt_client_request_end(gpreempt_client* client, uint64_t request_id) {
  return guarded([&] {
    if (!client) return fail(EINVAL, "client is NULL");
    std::lock_guard lock(client->mutex);
    client->hints.end(request_id);
    return 0;
  });
}

int gpreempt_client_request_end_tokens(gpreempt_client* client, uint64_t request_id,
                                       uint64_t tokens) {
  return guarded([&] {
    if (!client) return fail(EINVAL, "client is NULL");
    std::lock_guard lock(client->mutex);
    client->hints.end(request_id, tokens);
    return 0;
  });
}

int gpreempt_client_request_token(gpreempt_client* client, uint64_t request_id, uint64_t tokens) {
  return guarded([&] {
    if (!client) return fail(EINVAL, "client is NULL");
    if (tokens == 0) return fail(EINVAL, "tokens 0 (expected 1 .. 2^64-1: 1 is the first token)");
    std::lock_guard lock(client->mutex);
    client->hints.token(request_id, tokens);
    return 0;
  });
}

int gpreempt_client_expect_request(gpreempt_client* client, uint64_t in_us) {
  return guarded([&] {
    if (!client) return fail(EINVAL, "client is NULL");
    if (in_us == 0 || in_us > static_cast<uint64_t>(INT64_MAX)) {
      return fail(EINVAL, "in_us " + std::to_string(in_us) + " (expected 1 .. INT64_MAX)");
    }
    std::lock_guard lock(client->mutex);
    client->hints.expect(static_cast<int64_t>(in_us));
    return 0;
  });
}

int gpreempt_client_status_json(gpreempt_client* client, char** json_out) {
  return guarded([&] {
    if (!client || !json_out) return fail(EINVAL, "client or json_out is NULL");
    std::string s;
    {
      std::lock_guard lock(client->mutex);
      s = client->hints.call([](auto& conn) { return conn.status(); }).dump();
    }
    char* copy = static_cast<char*>(std::malloc(s.size() + 1));
    if (!copy) return fail(ENOMEM, "out of memory for a " + std::to_string(s.size()) + "-byte document");
    std::memcpy(copy, s.c_str(), s.size() + 1);
    *json_out = copy;
    return 0;
  });
}

int gpreempt_client_get_stats(gpreempt_client* client, struct gpreempt_client_stats* out) {
  return guarded([&] {
    if (!client || !out) return fail(EINVAL, "client or out is NULL");
    const std::size_t sz = out->sz;
    if (sz < sizeof(std::size_t)) {
      return fail(EINVAL, "gpreempt_client_stats.sz is " + std::to_string(sz) +
                              "; set it to sizeof(struct gpreempt_client_stats)");
    }
    gpreempt::client::HintStats s;
    {
      std::lock_guard lock(client->mutex);
      s = client->hints.stats();
    }
    gpreempt_client_stats full{};
    full.sz = sz;
    full.requests_protected = s.requests_protected;
    full.requests_unprotected = s.requests_unprotected;
    full.requests_open = s.requests_open;
    full.reconnects = s.reconnects;
    full.flags = s.connected ? uint32_t{GPREEMPT_CLIENT_CONNECTED} : 0u;
    // Only the bytes the caller's struct has: an older caller's smaller struct stays intact.
    std::memcpy(static_cast<void*>(out), &full, sz < sizeof(full) ? sz : sizeof(full));
    return 0;
  });
}

}  // extern "C"
