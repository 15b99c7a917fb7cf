/**
 * @file client.h
 * @brief libgpreempt client of gpreemptd: tell the scheduler daemon when this process's online
 *        requests start, end, or are about to start (the *hint* trigger), and ask who it thinks
 *        you are.
 *
 * A **client** is one connection to gpreemptd's Unix socket (docs/protocol.md). The daemon knows
 * the connecting process by its credentials (SO_PEERCRED), classifies it by its own config, and
 * acts on hints only from a process whose class may preempt: an offline job cannot declare itself
 * online. Closing the client (or the process exiting) ends every request it had begun.
 *
 * Conventions are those of gpreempt.h: 0 or a documented value >= 0 on success, a negative errno
 * on failure with gpreempt_last_error() saying why; option structs start with `sz` (declare them
 * with GPREEMPT_OPTS()); a larger struct whose unknown fields are not zero fails -E2BIG.
 * Errors specific to the daemon:
 *  - the daemon refused (its sentence is in gpreempt_last_error()): -EPERM not permitted (a hint
 *    from a class that may not preempt), -ESRCH unknown target, -EAGAIN unavailable now, -EINVAL
 *    bad request, -EPROTO unsupported protocol version, -EIO internal daemon error;
 *  - -ETIMEDOUT no reply within the timeout, -ECONNRESET the daemon closed the connection, -EPROTO
 *    a reply that is not the protocol: the client is then unusable (every later call -ENOTCONN);
 *    close it and connect again.
 *
 * Thread safety: a client may be used from several threads; calls on it are serialised.
 * Not fork-safe: a forked child must connect its own client.
 */
#ifndef GPREEMPT_CLIENT_H
#define GPREEMPT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <gpreempt/gpreempt.h>
#include <gpreempt/inspect.h> /* gpreempt_free() */

#ifdef __cplusplus
extern "C" {
#endif

/** Socket used when the path is NULL and $GPREEMPT_SOCKET is unset or empty. */
#define GPREEMPT_CLIENT_DEFAULT_SOCKET "/run/gpreempt/gpreemptd.sock"
/** Timeout of the connect and of each call when the options do not set one. */
#define GPREEMPT_CLIENT_TIMEOUT_DEFAULT_MS 5000u

/** Opaque connection to gpreemptd. */
typedef struct gpreempt_client gpreempt_client;

/** Options of gpreempt_client_connect(). Declare with GPREEMPT_OPTS(gpreempt_client_opts, o, ...). */
struct gpreempt_client_opts {
  size_t sz;
  /** Bound on the connect and on each later call, in milliseconds. 0: the default
   *  (GPREEMPT_CLIENT_TIMEOUT_DEFAULT_MS). */
  uint32_t timeout_ms;
};

/** Flags of gpreempt_client_info.flags. */
enum gpreempt_client_info_flags {
  /** The daemon acts on this process's hints (its class may preempt a lower one). Otherwise
   *  gpreempt_client_info.reason says why not. */
  GPREEMPT_CLIENT_MAY_PREEMPT = 1u << 0,
};

/** What the daemon says about the calling process. Set `sz = sizeof(struct gpreempt_client_info)`
 *  before gpreempt_client_hello(); only fields within it are written. Strings are NUL-terminated,
 *  truncated to their arrays. */
struct gpreempt_client_info {
  size_t sz;
  int32_t pid;             /**< this process as the daemon sees it */
  uint32_t flags;          /**< gpreempt_client_info_flags */
  char class_name[64];     /**< the class the daemon put this process in; "" when none matches */
  char daemon_version[32]; /**< gpreemptd's version string */
  char reason[256];        /**< without GPREEMPT_CLIENT_MAY_PREEMPT: why hints are ignored */
};

/**
 * @brief Connect to gpreemptd.
 * @param path the socket; NULL: $GPREEMPT_SOCKET when set and non-empty, else
 *        GPREEMPT_CLIENT_DEFAULT_SOCKET.
 * @param opts NULL for defaults.
 * @param[out] out the new client; unchanged on failure.
 * @retval 0 connected (no message is exchanged: use gpreempt_client_hello() to check the daemon).
 * @retval -ENOENT, -ECONNREFUSED, -EACCES, ... the socket cannot be connected; the message names the
 *         path and says gpreemptd may not be running. -ETIMEDOUT: no answer within the timeout.
 * @retval -EINVAL `out` is NULL or `opts->sz` is too small; -E2BIG as for every opts struct;
 *         -ENAMETOOLONG a path longer than a Unix socket address holds.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_connect(const char* path, const struct gpreempt_client_opts* opts,
                                         gpreempt_client** out);

/**
 * @brief Close the connection (the daemon ends the requests this client had begun) and free the
 *        client. NULL is ignored.
 * @note Thread safety: Not concurrently with other calls on the same client.
 */
GPREEMPT_API void gpreempt_client_close(gpreempt_client* client);

/**
 * @brief Ask the daemon who this process is to it (the `hello` op).
 * @param[in,out] out `out->sz` must be set; fields within it are written.
 * @retval 0 success; -EINVAL NULL arguments or `sz` smaller than the `sz` field; else as above.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_hello(gpreempt_client* client, struct gpreempt_client_info* out);

/**
 * @brief Hint: an online request of this process starts now.
 * @param[in,out] request_id `*request_id` 0: the library chooses an id (bit 63 set, so it never
 *        collides with the caller's own) and writes it; otherwise the caller's id (1 .. 2^63-1),
 *        which must not be open already on this client.
 * @retval 0 the daemon took the hint; -EPERM this process's class may not preempt (the message
 *         says which class it is in); -EINVAL a caller id with bit 63 set, NULL arguments; else as
 *         above. `*request_id` is unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_request_begin(gpreempt_client* client, uint64_t* request_id);

/**
 * @brief Hint: request `request_id` (from gpreempt_client_request_begin()) finished.
 * @retval 0 success; -EINVAL `request_id` 0; else as above.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_request_end(gpreempt_client* client, uint64_t request_id);

/**
 * @brief Early hint: a request will start in about `in_us` microseconds, so the daemon can
 *        suspend lower-priority work while this process is still pre-processing.
 * @retval 0 success; -EINVAL `in_us` is 0 or above INT64_MAX; else as above.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_expect_request(gpreempt_client* client, uint64_t in_us);

/**
 * @brief The daemon's status document as JSON (what `gpreempt ctl status --json` prints; its
 *        keys are listed in docs/protocol.md).
 * @param[out] json_out a NUL-terminated string owned by the caller: release it with
 *        gpreempt_free(); unchanged on failure.
 * @retval 0 success; -EINVAL NULL arguments; else as above.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_status_json(gpreempt_client* client, char** json_out);

#ifdef __cplusplus
}
#endif

#endif /* GPREEMPT_CLIENT_H */
