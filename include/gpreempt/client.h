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
 * **Hints fail open** (since 0.4): a request runs whether or not gpreemptd is there. With no
 * daemon listening, or when it goes away, restarts or refuses, gpreempt_client_request_begin(),
 * _request_end() and _expect_request() still return 0: the request runs unprotected, and is
 * counted (gpreempt_client_get_stats()). One line on stderr says protection is lost, one says it is
 * back — not one per request. The client reconnects lazily on later hints, with exponential
 * backoff (50 ms doubling to 2 s): while the daemon is away a hint makes at most one non-blocking
 * connect(2) per interval and never waits in it. One case costs time: a daemon that accepts the
 * connection but does not answer holds that one hint for up to the timeout (then the connection is
 * given up); $GPREEMPT_HINT_REPLIES=deferred never waits. A request begun before the daemon went
 * away finishes unprotected. Callers that want an error instead set
 * GPREEMPT_CLIENT_REQUIRE_DAEMON: then gpreempt_client_connect() fails without a daemon and every
 * hint returns the errors listed below, as before 0.4. Calls that need the daemon's answer
 * (gpreempt_client_hello(), gpreempt_client_status_json()) connect first if needed and return its
 * errors in every mode.
 *
 * Conventions are those of gpreempt.h: 0 or a documented value >= 0 on success, a negative errno
 * on failure with gpreempt_last_error() saying why; option structs start with `sz` (declare them
 * with GPREEMPT_OPTS()); a larger struct whose unknown fields are not zero fails -E2BIG.
 * Errors specific to the daemon:
 *  - the daemon refused (its sentence is in gpreempt_last_error()): -EPERM not permitted (a hint
 *    from a class that may not preempt), -ESRCH unknown target, -EAGAIN unavailable now, -EINVAL
 *    bad request, -EPROTO unsupported protocol version, -EIO internal daemon error;
 *  - -ETIMEDOUT no reply within the timeout, -ECONNRESET the daemon closed the connection, -EPROTO
 *    a reply that is not the protocol: the connection is dropped; the next call connects again.
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
  /** gpreempt_client_flags (since 0.4); unknown bits: -EINVAL. */
  uint32_t flags;
};

/** Flags of gpreempt_client_opts.flags. */
enum gpreempt_client_flags {
  /** Fail closed: connecting fails without a daemon, and a hint the daemon does not take returns
   *  its error instead of letting the request run unprotected (the behaviour before 0.4). */
  GPREEMPT_CLIENT_REQUIRE_DAEMON = 1u << 0,
};

/** Flags of gpreempt_client_stats.flags. */
enum gpreempt_client_stats_flags {
  /** The client holds a connection to gpreemptd now. */
  GPREEMPT_CLIENT_CONNECTED = 1u << 0,
};

/** What a client's hints achieved (gpreempt_client_get_stats()). Set
 *  `sz = sizeof(struct gpreempt_client_stats)`; only fields within it are written. */
struct gpreempt_client_stats {
  size_t sz;
  uint64_t requests_protected;   /**< begins the daemon took (deferred replies: that were sent) */
  uint64_t requests_unprotected; /**< begins that ran without the daemon: away, or it refused */
  uint64_t requests_open;        /**< begun and not ended yet */
  uint64_t reconnects;           /**< connections made after being without one */
  uint32_t flags;                /**< gpreempt_client_stats_flags */
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
 * @retval 0 a client (no message is exchanged: use gpreempt_client_hello() to check the daemon).
 *         Without GPREEMPT_CLIENT_REQUIRE_DAEMON also when no daemon answers (one non-blocking
 *         attempt): its hints then fail open until one does.
 * @retval -ENOENT, -ECONNREFUSED, -EACCES, ... with GPREEMPT_CLIENT_REQUIRE_DAEMON: the socket cannot
 *         be connected; the message names the path and says gpreemptd may not be running.
 *         -ETIMEDOUT: no answer within the timeout.
 * @retval -EINVAL `out` is NULL, `opts->sz` is too small, unknown flags, or a bad
 *         $GPREEMPT_HINT_REPLIES; -E2BIG as for every opts struct; -ENAMETOOLONG a path longer
 *         than a Unix socket address holds.
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
 * @retval 0 the request may run: the daemon took the hint or (failing open) the request runs
 *         unprotected. -EINVAL a caller id with bit 63 set or already open, NULL arguments.
 *         With GPREEMPT_CLIENT_REQUIRE_DAEMON also: -EPERM this process's class may not preempt
 *         (the message says which class it is in), and the errors above. `*request_id` is
 *         unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_request_begin(gpreempt_client* client, uint64_t* request_id);

/**
 * @brief Hint: request `request_id` (from gpreempt_client_request_begin()) finished. Sent only when
 *        it was begun on the current connection (a restarted daemon never saw the others).
 * @retval 0 success (failing open: also when the daemon is away or refuses); -EINVAL
 *         `request_id` 0; with GPREEMPT_CLIENT_REQUIRE_DAEMON, the errors above.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_client_request_end(gpreempt_client* client, uint64_t request_id);

/**
 * @brief Hint for an LLM request: request `request_id` has produced `tokens` output tokens so far.
 *        Call it with 1 when its first token is produced (the daemon measures its time to first
 *        token, TTFT, for a class with a `ttft_...` objective); later calls with the count so far
 *        tell the daemon its decode pace. Sent only when the request was begun on the current
 *        connection, as for gpreempt_client_request_end().
 * @retval 0 success (failing open: also when the daemon is away or refuses); -EINVAL
 *         `request_id` 0 or `tokens` 0; with GPREEMPT_CLIENT_REQUIRE_DAEMON, the errors above.
 * @note Thread safety: Any thread. Since 0.5.
 */
GPREEMPT_API int gpreempt_client_request_token(gpreempt_client* client, uint64_t request_id,
                                               uint64_t tokens);

/**
 * @brief gpreempt_client_request_end() for an LLM request that produced `tokens` output tokens:
 *        with its first token (gpreempt_client_request_token()), the daemon measures its time per
 *        output token (TPOT) for a class with a `tpot_...` objective. `tokens` 0: not said (the
 *        same as gpreempt_client_request_end()).
 * @retval as gpreempt_client_request_end().
 * @note Thread safety: Any thread. Since 0.5.
 */
GPREEMPT_API int gpreempt_client_request_end_tokens(gpreempt_client* client, uint64_t request_id,
                                                    uint64_t tokens);

/**
 * @brief Early hint: a request will start in about `in_us` microseconds, so the daemon can
 *        suspend lower-priority work while this process is still pre-processing.
 * @retval 0 success (failing open: also when the daemon is away or refuses); -EINVAL `in_us` is 0
 *         or above INT64_MAX; with GPREEMPT_CLIENT_REQUIRE_DAEMON, the errors above.
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

/**
 * @brief What this client's hints achieved: requests protected and unprotected, open, reconnects,
 *        whether it is connected now. Asks nothing of the daemon.
 * @param[in,out] out `out->sz` must be set; fields within it are written.
 * @retval 0 success; -EINVAL NULL arguments or `sz` smaller than the `sz` field.
 * @note Thread safety: Any thread. Since 0.4.
 */
GPREEMPT_API int gpreempt_client_get_stats(gpreempt_client* client, struct gpreempt_client_stats* out);

#ifdef __cplusplus
}
#endif

#endif /* GPREEMPT_CLIENT_H */
