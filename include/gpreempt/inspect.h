/**
 * @file inspect.h
 * @brief libgpreempt inspection: decode KFD text formats (topology properties, debugfs
 *        mqds/hqds/rls), join them into the queue map, and analyze HIP runtime logs.
 *
 * Text in, JSON out. The JSON documents are exactly what `gpreempt decode|map|log analyze --json`
 * prints (docs/api.md, "Inspection API"), so a program and a shell script see the same fields.
 * They follow docs/json.md: a top-level `schema_version`, snake_case keys with units, `gpu_id` a
 * number, addresses `"0x…"` strings (JSON numbers lose precision above 2^53); their JSON Schemas
 * are installed in share/gpreempt/schemas.
 *
 * These functions do no I/O: pass the text of a file you read (live debugfs needs root). None
 * needs a context, /dev/kfd or a GPU.
 *
 * Conventions (in addition to those of gpreempt.h):
 *  - Return 1 when the input was understood completely, 0 when it was malformed or cut short: the
 *    document is then still produced, partial, with `"complete": false` and `diagnostics` naming
 *    the display name and 1-based line of each problem (never a guess, never a crash), and
 *    gpreempt_last_error() says the input was incomplete. A negative errno is returned on
 *    failure (bad arguments: -EINVAL; out of memory: -ENOMEM), with gpreempt_last_error()
 *    saying why; `*json_out` is then left unchanged.
 *  - On 0 or 1, `*json_out` is a NUL-terminated UTF-8 string owned by the caller: release it with
 *    gpreempt_free().
 *  - `text` need not be NUL-terminated (`len` bytes are read); `text` may be NULL when `len` is 0.
 */
#ifndef GPREEMPT_INSPECT_H
#define GPREEMPT_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include <gpreempt/gpreempt.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Decode one KFD text format into JSON (`gpreempt decode KIND FILE --json`).
 * @param kind "properties" (a topology node's properties file, any kernel age), "mqds", "hqds"
 *        or "rls" (the debugfs files under /sys/kernel/debug/kfd/).
 * @param text the file's contents, `len` bytes.
 * @param display_name the name diagnostics print (e.g. the path it was read from); NULL:
 *        "<string>".
 * @param json_out receives the document; unchanged on failure.
 * @return 1 complete, 0 incomplete (partial document, diagnostics inside), -EINVAL for an unknown
 *         `kind`, a NULL `kind`/`json_out`, or NULL `text` with `len` > 0; -ENOMEM.
 * @note Thread safety: Any thread (pure; no shared state).
 */
GPREEMPT_API int gpreempt_decode(const char* kind, const char* text, size_t len,
                                 const char* display_name, char** json_out);

/**
 * @brief Analyze a HIP/ROCclr runtime log (AMD_LOG_LEVEL 1-5) into JSON
 *        (`gpreempt log analyze FILE --json`): `{"schema_version", "files": [{...}]}` with one
 *        entry: lines, records, processes and threads, hardware queues (HWq addresses, SWqs,
 *        size, priority, dispatches, barriers), kernels, errors.
 * @param display_name stored as the entry's `file`; NULL: "<string>".
 * @param pid_filter keep only records of this pid (records that print no pid are kept); -1: all.
 * @param json_out receives the document; unchanged on failure.
 * @return 1 complete, 0 when a record longer than the analyzer's record cap (1 MiB) was cut
 *         (`"truncated_record": true`), or -EINVAL (NULL `json_out`, NULL `text` with `len` > 0,
 *         `pid_filter` < -1), -ENOMEM.
 * @note Thread safety: Any thread (pure; no shared state).
 */
GPREEMPT_API int gpreempt_log_analyze(const char* text, size_t len, const char* display_name,
                                      int32_t pid_filter, char** json_out);

/**
 * @brief Join saved debugfs dumps (and optionally a HIP log) into one row per KFD queue
 *        (`gpreempt map --offline --mqds … --hqds … --rls … --log … --json`): pid, queue id
 *        (inferred from creation order, `queue_id_inferred`), gpu, type, ring base, read-pointer
 *        address, priorities, the hardware slots where it is mapped, the log's HWq addresses.
 * @param mqds, hqds, rls, log NUL-terminated texts; each may be NULL (not given), but at least
 *        one of `mqds` and `hqds` is required. Diagnostics name them "<mqds>", "<hqds>", "<rls>".
 * @param pid_filter keep only this process's rows; -1: all.
 * @param json_out receives the document; unchanged on failure.
 * @return 1 when every given dump was complete, 0 when any was not (the map is built from what
 *         was decoded; `diagnostics` lists the problems), -EINVAL (neither `mqds` nor `hqds`,
 *         NULL `json_out`, `pid_filter` < -1), -ENOMEM.
 * @note Thread safety: Any thread (pure; no shared state).
 */
GPREEMPT_API int gpreempt_queue_map(const char* mqds, const char* hqds, const char* rls,
                                    const char* log, int32_t pid_filter, char** json_out);

/** Options of gpreempt_queue_map_opts(). Declare with GPREEMPT_OPTS(gpreempt_queue_map_opts, o, ...). */
struct gpreempt_queue_map_opts {
  size_t sz;
  const char* mqds; /**< NUL-terminated text of debugfs mqds, or NULL */
  const char* hqds; /**< NUL-terminated text of debugfs hqds, or NULL */
  const char* rls;  /**< NUL-terminated text of debugfs rls, or NULL */
  const char* log;  /**< NUL-terminated HIP log whose HWq addresses to join, or NULL */
  int32_t pid;      /**< keep only this process's rows; 0: every process */
  /** Zero. Names what was trailing padding, so that an initializer zeroes it: a compound literal
   *  (GPREEMPT_OPTS) may copy garbage into padding, which the library would read as a field of a
   *  newer version (-E2BIG). A later version may give these bytes a meaning whose zero is today's. */
  uint32_t reserved;
};

/**
 * @brief gpreempt_queue_map() with its inputs in an options struct that can grow (since 0.2,
 *        version node GPREEMPT_0.2).
 * @return as gpreempt_queue_map(); -E2BIG when `opts` is larger than this library knows and a field
 *         it does not know is set; -EINVAL for a NULL `opts`, `opts->sz` smaller than `sz`, or a
 *         negative `pid`.
 * @note Thread safety: Any thread (pure; no shared state).
 */
GPREEMPT_API int gpreempt_queue_map_opts(const struct gpreempt_queue_map_opts* opts, char** json_out);

/**
 * @brief Release a string returned by the inspection functions. NULL is ignored.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API void gpreempt_free(void* p);

#ifdef __cplusplus
}
#endif

#endif /* GPREEMPT_INSPECT_H */
