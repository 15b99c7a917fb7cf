/**
 * @file gpreempt.h
 * @brief libgpreempt: suspend and resume the KFD compute queues of another process on AMD
 *        Instinct GPUs through the upstream debug-trap ioctls (no kernel or runtime patches).
 *
 * A **context** owns one `/dev/kfd` file descriptor and one control thread. The KFD accepts
 * queue suspension for a target only from the thread that is the ptrace tracer of the target's
 * main thread, so that thread does every ptrace and DBG_TRAP call; calls made from any of your
 * threads are handed to it. A **target** is a process attached to a context (ptrace-seized, with a
 * KFD debug session).
 *
 * Conventions:
 *  - Functions returning `int` return 0 (or a count >= 0 where documented) on success and a
 *    negative errno value on failure. After a failure, gpreempt_last_error() returns a sentence
 *    for humans on the calling thread; gpreempt_strerror() names the code.
 *  - Output parameters are left unchanged when a function fails, unless documented otherwise.
 *  - Option structs start with `sz`; declare them with GPREEMPT_OPTS(), which zeroes the struct and
 *    sets `sz` (as libbpf's LIBBPF_OPTS). The library reads only the fields within `sz`, so an
 *    older program's smaller struct keeps working with a newer library, and a newer program's
 *    larger struct works with an older library as long as every field the library does not know
 *    is zero; otherwise the call fails with -E2BIG and changes nothing. A zero field means the
 *    documented default, so a newer field left unset asks for the old behaviour.
 *  - Symbols are versioned (GPREEMPT_0.1, GPREEMPT_0.2, ...): a signature is never changed in
 *    place; a new behaviour gets a new symbol under the newest version node.
 *  - Never leaving a target frozen: queues suspended through a context are resumed on detach, on
 *    close, on SIGINT/SIGTERM/SIGHUP (unless disabled), and by a watchdog after a bounded time.
 *    If the kernel also loses the controlling process (crash), it resumes them itself.
 *  - No C++ exception crosses this interface.
 *  - Signal handlers (default on; GPREEMPT_CTX_NO_SIGNAL_HANDLERS turns them off) are installed
 *    once per process for SIGINT/SIGTERM/SIGHUP. They resume every context's targets (waiting at
 *    most 3 s), then hand the signal on to the handler that was installed before, or re-raise it
 *    with the default action. A handler the program installs later replaces ours.
 *  - Not fork-safe: a forked child must not use its parent's contexts (the KFD also binds
 *    /dev/kfd to the process that opened it); open a new context in the child.
 *
 * Grace periods are in the kernel's unit: **1,000 GPU clock cycles**, not microseconds
 * (GPREEMPT_GRACE_DEFAULT keeps the driver's default). Use gpreempt_grace_from_us().
 */
#ifndef GPREEMPT_GPREEMPT_H
#define GPREEMPT_GPREEMPT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GPREEMPT_API __attribute__((visibility("default")))
#else
#define GPREEMPT_API
#endif

/* GPREEMPT_VERSION_MAJOR/MINOR/PATCH and GPREEMPT_VERSION_STRING, generated from the project
 * version in CMake (installed beside this header). */
#include "gpreempt/version.h"

/**
 * Declare `struct TYPE NAME` with every byte zero (padding too), `sz` set and the given fields:
 *   GPREEMPT_OPTS(gpreempt_ctx_opts, opts, .watchdog_ms = 5000);
 * (GNU statement expression, like libbpf's LIBBPF_OPTS: GCC and Clang, C and C++.)
 */
#define GPREEMPT_OPTS(TYPE, NAME, ...)                                                          \
  struct TYPE NAME = ({                                                                         \
    memset(&NAME, 0, sizeof(struct TYPE));                                                      \
    (struct TYPE){.sz = sizeof(struct TYPE), __VA_ARGS__};                                      \
  })

/** Watchdog bound of a context whose options do not set one (opts NULL, or a `sz` that ends
 *  before `watchdog_ms`). */
#define GPREEMPT_WATCHDOG_DEFAULT_MS 30000u

/** Largest clock gpreempt_grace_from_us() accepts: real GPU clocks are a few thousand MHz; an
 *  errno from gpreempt_gpu_clock_mhz() cast to uint32_t is above 4,000,000,000. */
#define GPREEMPT_CLOCK_MHZ_MAX 100000u

/** Grace period value that leaves the driver's default preemption grace period in place. */
#define GPREEMPT_GRACE_DEFAULT 0xffffffffu

/** Opaque library context (one /dev/kfd, one control thread). */
typedef struct gpreempt_ctx gpreempt_ctx;
/** Opaque attached target process. Valid until gpreempt_detach() or gpreempt_ctx_close(). */
typedef struct gpreempt_target gpreempt_target;

/** Flags of gpreempt_ctx_opts.flags. */
enum gpreempt_ctx_flags {
  /** Do not install SIGINT/SIGTERM/SIGHUP handlers that resume targets before the signal acts. */
  GPREEMPT_CTX_NO_SIGNAL_HANDLERS = 1u << 0,
};

/** Options of gpreempt_ctx_open(). Declare with GPREEMPT_OPTS(gpreempt_ctx_opts, o, ...). */
struct gpreempt_ctx_opts {
  size_t sz;               /**< sizeof(struct gpreempt_ctx_opts) as compiled by the caller */
  const char* device_path; /**< NULL: "/dev/kfd" */
  /** Resume any suspension older than this many milliseconds. 0: no watchdog (as `--watchdog-ms 0`
   *  of the CLI and `watchdog_ms=0` in Python; UINT32_MAX also means off, as before 0.2). Opts
   *  NULL, or a `sz` that ends before this field: GPREEMPT_WATCHDOG_DEFAULT_MS. Until 0.2, 0 meant
   *  30000 here while it meant "off" everywhere else. */
  uint32_t watchdog_ms;
  uint32_t flags;          /**< gpreempt_ctx_flags */
};

/** Flags of gpreempt_attach_opts.flags. */
enum gpreempt_attach_flags {
  /** Fail instead of attaching a process that has no KFD queues: -ESRCH when it never opened
   *  /dev/kfd (a launcher shell, the parent of a PyTorch worker — the kernel would otherwise
   *  create an empty KFD process for it), -ENODATA when its runtime has not created queues yet. */
  GPREEMPT_ATTACH_REQUIRE_QUEUES = 1u << 0,
};

/** Options of gpreempt_attach_opts(). Declare with GPREEMPT_OPTS(gpreempt_attach_opts, o, ...). */
struct gpreempt_attach_opts {
  size_t sz;
  uint32_t flags; /**< gpreempt_attach_flags; unknown bits: -EINVAL */
  /** Zero. Names what was trailing padding, so that an initializer zeroes it: a compound literal
   *  (GPREEMPT_OPTS) may copy garbage into padding, which the library would read as a field of a
   *  newer version (-E2BIG). A later version may give these bytes a meaning whose zero is today's. */
  uint32_t reserved;
};

/** Options of gpreempt_suspend_opts(). Every field zero: the driver's default grace period. */
struct gpreempt_suspend_opts {
  size_t sz;
  /** Grace period in microseconds, converted at the highest max compute clock among the GPUs of
   *  the queues being suspended (so each GPU gets at least this long). 0: see grace_units. */
  uint64_t grace_us;
  /** Grace period in the kernel's unit (1,000 GPU clocks), used when grace_us is 0. 0: the
   *  driver's default (GPREEMPT_GRACE_DEFAULT). */
  uint32_t grace_units;
  /** Zero. Names what was trailing padding, so that an initializer zeroes it: a compound literal
   *  (GPREEMPT_OPTS) may copy garbage into padding, which the library would read as a field of a
   *  newer version (-E2BIG). A later version may give these bytes a meaning whose zero is today's. */
  uint32_t reserved;
};

/** uapi queue types (KFD_IOC_QUEUE_TYPE_*) as reported in gpreempt_queue.type. */
enum gpreempt_queue_type {
  GPREEMPT_QUEUE_COMPUTE = 0,
  GPREEMPT_QUEUE_SDMA = 1,
  GPREEMPT_QUEUE_COMPUTE_AQL = 2,
  GPREEMPT_QUEUE_SDMA_XGMI = 3,
};

/** One queue of a target, from the KFD queue snapshot. */
struct gpreempt_queue {
  uint32_t queue_id;                 /**< per-process queue id (what suspend/resume take) */
  uint32_t gpu_id;                   /**< KFD topology gpu_id */
  uint32_t type;                     /**< gpreempt_queue_type */
  uint32_t ring_size;                /**< bytes */
  uint64_t ring_base_address;        /**< target's virtual address of the ring */
  uint64_t read_pointer_address;     /**< target's address of the read dispatch id */
  uint64_t write_pointer_address;    /**< target's address of the write dispatch id */
  uint64_t ctx_save_restore_address; /**< CWSR area */
  uint32_t ctx_save_restore_size;    /**< bytes */
  uint32_t suspended;                /**< 1 if suspended through this context and not resumed */
  uint64_t exception_status;         /**< KFD exception bits as snapshotted (bit 30 = new queue) */
};

/** Per-queue outcome of gpreempt_suspend_queues() / gpreempt_resume_queues(). */
enum gpreempt_queue_status {
  GPREEMPT_QUEUE_OK = 0,      /**< suspended (resumed), newly or already */
  GPREEMPT_QUEUE_INVALID = 1, /**< no such queue, still new, or being destroyed (kernel bit 31) */
  GPREEMPT_QUEUE_ERROR = 2,   /**< the scheduler failed to preempt/remap it (kernel bit 30) */
};

/** A queue as per-process sysfs shows it (no debug session needed). */
struct gpreempt_sysfs_queue {
  uint32_t queue_id;
  uint32_t gpu_id;
  uint32_t type; /**< kernel-internal type: 0 compute, 1 SDMA, 2 HIQ, 3 SDMA XGMI (newest) */
  uint32_t reserved;
  uint64_t ring_size; /**< bytes */
};

/** Counters and timings of a context. Set `sz = sizeof(struct gpreempt_stats)` before the call. */
struct gpreempt_stats {
  size_t sz;
  uint64_t suspend_calls;
  uint64_t resume_calls;
  uint64_t watchdog_resumes;  /**< times the watchdog resumed queues */
  uint64_t forced_disables;   /**< times a failed resume led to DISABLE */
  uint64_t signals_handled;
  uint64_t control_calls;     /**< calls handed to the control thread */
  uint64_t last_hop_ns;       /**< caller → control thread, last call */
  uint64_t max_hop_ns;
  uint64_t total_hop_ns;
  uint64_t last_ioctl_ns;     /**< last SUSPEND/RESUME ioctl alone */
  uint64_t last_total_ns;     /**< last suspend/resume call as the caller saw it */
  uint64_t watchdog_ms;       /**< (since 0.2) the watchdog bound in effect; 0: no watchdog */
};

/* ---- version and errors ------------------------------------------------------------------ */

/**
 * @brief Library version as (major << 16) | (minor << 8) | patch.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API uint32_t gpreempt_version(void);

/**
 * @brief Library version as "major.minor.patch". The string is static.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API const char* gpreempt_version_string(void);

/**
 * @brief Short name of an error code (accepts `err` or `-err`), e.g. "EPERM: Operation not
 *        permitted". The string is static (or thread-local for unknown codes).
 * @note Thread safety: Any thread.
 */
GPREEMPT_API const char* gpreempt_strerror(int err);

/**
 * @brief Detail message of the last failed call on this thread ("" if none). Valid until the next
 *        gpreempt call on this thread.
 * @note Thread safety: Per thread.
 */
GPREEMPT_API const char* gpreempt_last_error(void);

/* ---- context ------------------------------------------------------------------------------ */

/**
 * @brief Open /dev/kfd (O_CLOEXEC), check the KFD ioctl version, start the control thread.
 * @param opts NULL for defaults, else options with `sz` set.
 * @param[out] out the new context.
 * @retval 0 success.
 * @retval -EINVAL `out` is NULL or `opts->sz` is smaller than its first field.
 * @retval -EPROTO the KFD ioctl version is outside [1.13, 2.0) (the message says which was found).
 * @retval -ENOENT, -EACCES, ... /dev/kfd cannot be opened.
 * `*out` is left unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_ctx_open(const struct gpreempt_ctx_opts* opts, gpreempt_ctx** out);

/**
 * @brief Detach every target (resuming what this context suspended), stop the control thread,
 *        close /dev/kfd, free the context. NULL is ignored.
 * In a forked child of the process that opened the context it only frees the child's copy (the
 * parent's targets stay attached to the parent); every other call on it there fails -ECHILD, and
 * the signal handlers of a child do not wake its parent's contexts.
 * @note Thread safety: Must not run concurrently with other calls on the same context; afterwards the
 *               context and its targets are invalid.
 */
GPREEMPT_API void gpreempt_ctx_close(gpreempt_ctx* ctx);

/**
 * @brief The KFD ioctl interface version of the context's device.
 * @retval 0 success; -EINVAL on NULL arguments (outputs unchanged).
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_kfd_version(gpreempt_ctx* ctx, uint32_t* major, uint32_t* minor);

/**
 * @brief Counters and timings of the context (control-thread hop, last ioctl).
 * @param[in,out] out `out->sz` must be set; only fields within it are written.
 * @retval 0 success; -EINVAL on NULL arguments or a too small `sz` (nothing written).
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_get_stats(gpreempt_ctx* ctx, struct gpreempt_stats* out);

/**
 * @brief Take the oldest notice — something the context did on its own (watchdog resume, resume on
 *        signal, a target that exited, a failed resume answered by DISABLE).
 * @param[out] pid the process concerned (may be NULL).
 * @param[out] buf message text, NUL-terminated, truncated to `len` (may be NULL if len is 0).
 * @retval 1 a notice was taken; 0 none pending; -EINVAL on a NULL context.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_take_notice(gpreempt_ctx* ctx, int32_t* pid, char* buf, size_t len);

/* ---- targets ------------------------------------------------------------------------------ */

/**
 * @brief Attach process `pid`: PTRACE_SEIZE its main thread from the control thread (the target
 *        keeps running), ENABLE a KFD debug session, answer pending runtime events, snapshot its
 *        queues.
 * @param[out] out target handle.
 * @retval 0 success.
 * @retval -ESRCH no such process (or it exited).
 * @retval -EBUSY it is already traced; the message names the tracer's pid and command.
 * @retval -EPERM not permitted to ptrace it.
 * @retval -EALREADY already attached to this context, or another debugger holds its KFD session.
 * @retval -EINVAL `pid` is a thread id, this process, or an argument is NULL.
 * `*out` is left unchanged on failure; a failed attach leaves the process untraced.
 * While attached the target is ptrace-seized by the control thread: every signal it receives
 * stops it briefly until the control thread passes the signal on, and each such stop sends this
 * process a SIGCHLD. If this process is also the target's parent, a reaper here that waits for
 * any child (waitpid(-1, ...), or a SIGCHLD handler doing so) can consume those stops, leaving the
 * target stopped; wait for your children by pid. The target's exit status stays yours to reap.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_attach(gpreempt_ctx* ctx, int32_t pid, gpreempt_target** out);

/**
 * @brief Resume the queues this context suspended, DISABLE the debug session (which resumes every
 *        queue), ptrace-detach (interrupt, wait, detach) and free `target`.
 * @retval 0 success, also when the process has exited meanwhile; -EINVAL on NULL.
 * @retval -EIO the resume and DISABLE both failed: queues of the target may stay suspended (the
 *         message lists them); the process is detached anyway.
 * The handle is invalid afterwards in every case.
 * @note Thread safety: Any thread, but not concurrently with other calls on the same target.
 */
GPREEMPT_API int gpreempt_detach(gpreempt_target* target);

/** @brief The pid of an attached target, or -EINVAL for NULL. Thread safety: any thread. */
GPREEMPT_API int32_t gpreempt_target_pid(const gpreempt_target* target);

/**
 * @brief Refresh the target's queue snapshot and copy up to `capacity` entries to `out`
 *        (newest queue first, as the kernel lists them). The refresh also makes newly created
 *        queues suspendable.
 * @param out may be NULL when `capacity` is 0 (count query).
 * @return the total number of queues (may exceed `capacity`; call again with a bigger array),
 *         or a negative errno: -ESRCH the target exited; -EINVAL NULL arguments.
 * `out` is left unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_list_queues(gpreempt_target* target, struct gpreempt_queue* out,
                                      uint32_t capacity);

/**
 * @brief Suspend queues of the target (SUSPEND_QUEUES). Queues created since the last call can be
 *        suspended: the library's queue snapshot follows the target's queue events and is
 *        refreshed first whenever it may be stale or `ids` names a queue it does not hold.
 * @param ids queue ids (distinct, bits 30/31 clear); NULL with `count` 0 is allowed and does nothing.
 * @param grace grace period in 1K GPU clocks (gpreempt_grace_from_us()), or GPREEMPT_GRACE_DEFAULT.
 * @param[out] status per-queue gpreempt_queue_status, `count` entries (may be NULL).
 * @return the number of the given queues now suspended (newly or already). A value below `count`
 *         is a partial failure: `status` says which queues failed and gpreempt_last_error() why.
 *         Negative errno when nothing was attempted: -EINVAL (duplicate/invalid ids, NULL),
 *         -ESRCH (target exited), -EPERM (target runtime not enabled), -EPROTO (the kernel's
 *         count contradicted the per-queue bits; the session was disabled, resuming everything).
 * `status` is left unchanged when the return value is negative.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_suspend_queues(gpreempt_target* target, const uint32_t* ids,
                                         uint32_t count, uint32_t grace, uint32_t* status);

/**
 * @brief Resume queues of the target (RESUME_QUEUES).
 * @param[out] status per-queue gpreempt_queue_status, `count` entries (may be NULL).
 * @return the number of the given queues now running; below `count` for queues that do not
 *         exist (GPREEMPT_QUEUE_INVALID). Negative errno on failure: -EIO when the resume failed
 *         and the library disabled the debug session instead (every queue of the target is
 *         running again; the session is re-enabled), -ESRCH target exited, -EINVAL arguments.
 * `status` is left unchanged when the return value is negative.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_resume_queues(gpreempt_target* target, const uint32_t* ids,
                                        uint32_t count, uint32_t* status);

/**
 * @brief Suspend every queue of the target (current snapshot, one SUSPEND_QUEUES call).
 * @return the number of queues now suspended (0 if it has none), or a negative errno as for
 *         gpreempt_suspend_queues(). A partial failure returns the count and sets the detail
 *         message.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_suspend_process(gpreempt_target* target, uint32_t grace);

/**
 * @brief Resume every queue of the target (current snapshot, one RESUME_QUEUES call).
 * @return the number of queues now running, or a negative errno as for gpreempt_resume_queues().
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_resume_process(gpreempt_target* target);

/* ---- discovery without a debug session ---------------------------------------------------- */

/**
 * @brief Queues of any process from per-process sysfs (/sys/class/kfd/kfd/proc/<pid>/queues):
 *        no context, no root, no ptrace.
 * @param out may be NULL when `capacity` is 0.
 * @return the total number of queues (may exceed `capacity`), or -ESRCH when `pid` has no KFD
 *         process (never opened /dev/kfd, or exited), -EIO on a malformed sysfs file.
 * `out` is left unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_find_queues_by_process(int32_t pid, struct gpreempt_sysfs_queue* out,
                                                 uint32_t capacity);

/**
 * @brief Print the calling process's own KFD queues (id, gpu, type, ring size) to stdout, from
 *        per-process sysfs — no root, no debug session. Meant to be called from inside a model
 *        (e.g. through ctypes) to log which queues it uses.
 *        A process without queues — it has not opened /dev/kfd, or its runtime has not used
 *        the GPU yet — gets one line saying so ("gpreempt: process 123 has no KFD queues yet
 *        (queues appear when the GPU runtime first uses the GPU)").
 * @return the number of queues printed (0 when there are none yet), or a negative errno when
 *         per-process sysfs cannot be read (-EIO: a malformed file).
 * @note Thread safety: Any thread (writes to stdout).
 */
GPREEMPT_API int gpreempt_print_my_queues(void);

/* ---- grace period helpers ----------------------------------------------------------------- */

/**
 * @brief Convert microseconds to the kernel's grace unit (1,000 GPU clocks) at `clock_mhz`:
 *        ceil(us * MHz / 1000), at least 1 (the GFX9 CP treats 0 as infinite), capped below
 *        GPREEMPT_GRACE_DEFAULT. `clock_mhz` 0 returns GPREEMPT_GRACE_DEFAULT.
 *        Example: 100 us at 2100 MHz = 210 units.
 *        A `clock_mhz` above GPREEMPT_CLOCK_MHZ_MAX is not a clock — typically a negative errno
 *        of gpreempt_gpu_clock_mhz() passed on unchecked — and returns GPREEMPT_GRACE_DEFAULT
 *        with gpreempt_last_error() saying so, never a grace period computed from it.
 *        gpreempt_suspend_opts() with `grace_us` converts for you.
 * @note Thread safety: Any thread (pure).
 */
GPREEMPT_API uint32_t gpreempt_grace_from_us(uint64_t us, uint32_t clock_mhz);

/**
 * @brief The maximum compute engine clock of GPU `gpu_id` in MHz, from the KFD topology
 *        (max_engine_clk_fcompute), for gpreempt_grace_from_us().
 * @return MHz (> 0), -ENODEV if no such GPU, or a negative errno if the topology is unreadable.
 * @deprecated The value and the error share one int: use gpreempt_gpu_max_clock_mhz(), whose
 *        status cannot be mistaken for a clock.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_gpu_clock_mhz(uint32_t gpu_id);

/* ---- since 0.2 (version node GPREEMPT_0.2) ------------------------------------------------ */

/**
 * @brief The maximum compute engine clock of GPU `gpu_id` (max_engine_clk_fcompute of the KFD
 *        topology) in `*mhz`.
 * @retval 0 success, `*mhz` > 0.
 * @retval -EINVAL `mhz` is NULL.
 * @retval -ENODEV no GPU with that gpu_id; -ENODATA the GPU reports no clock; another negative
 *         errno when the topology is unreadable. `*mhz` is left unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_gpu_max_clock_mhz(uint32_t gpu_id, uint32_t* mhz);

/**
 * @brief gpreempt_attach() with options.
 * @param opts NULL for defaults (the same as gpreempt_attach()).
 * @retval -E2BIG `opts` is larger than this library knows and a field it does not know is set.
 * @retval -EINVAL `opts->sz` smaller than the `sz` field, unknown flag bits, NULL arguments.
 * @retval -ESRCH, -ENODATA with GPREEMPT_ATTACH_REQUIRE_QUEUES: no KFD process, no queues (the
 *         message names the pid and its command). Otherwise as gpreempt_attach().
 * `*out` is left unchanged on failure.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_attach_opts(gpreempt_ctx* ctx, int32_t pid,
                                      const struct gpreempt_attach_opts* opts,
                                      gpreempt_target** out);

/**
 * @brief Suspend queues with options: `ids` (`count` entries), or every queue of the target when
 *        `ids` is NULL and `count` is 0; the grace period from `opts` (NULL: the driver default).
 * @param[out] status per-queue gpreempt_queue_status, one per given id (may be NULL; ignored when
 *        suspending every queue).
 * @return as gpreempt_suspend_queues(); also -E2BIG / -EINVAL for `opts` as gpreempt_attach_opts(),
 *         and -ENODATA when `grace_us` is set but no GPU of the queues reports a clock.
 * @note Thread safety: Any thread.
 */
GPREEMPT_API int gpreempt_suspend_opts(gpreempt_target* target, const uint32_t* ids, uint32_t count,
                                       uint32_t* status, const struct gpreempt_suspend_opts* opts);

#ifdef __cplusplus
}
#endif

#endif /* GPREEMPT_GPREEMPT_H */
