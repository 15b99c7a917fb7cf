// The C ABI (include/gpreempt/gpreempt.h) over the C++ core. Every entry point catches every
// exception: errors become a negative errno and a per-thread detail message.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include "capi_error.h"
#include "capi_opts.h"
#include "common/error.h"
#include "gpreempt/gpreempt.h"
#include "kfd/grace.h"
#include "discovery/proc_parse.h"
#include "discovery/process_discovery.h"
#include "discovery/topology.h"
#include "preempt/context.h"

using gpreempt::Error;

static_assert(std::chrono::milliseconds(GPREEMPT_WATCHDOG_DEFAULT_MS) ==
                  gpreempt::preempt::kDefaultWatchdogBound,
              "the C ABI and the core must agree on the default watchdog bound");

struct gpreempt_target;

struct gpreempt_ctx {
  std::unique_ptr<gpreempt::preempt::Context> core;
  // Target handles not yet detached: gpreempt_ctx_close frees them.
  std::mutex targets_mutex;
  std::set<gpreempt_target*> targets;
  std::atomic<uint64_t> last_ioctl_ns{0};
  std::atomic<uint64_t> last_total_ns{0};
  std::mutex notice_mutex;
  std::deque<gpreempt::preempt::Notice> pending;
};

struct gpreempt_target {
  gpreempt_ctx* ctx;
  int32_t pid;
};

namespace {

using gpreempt::capi::fail;  // shared with capi_inspect.cpp (capi_error.h)
using gpreempt::capi::guarded;
using gpreempt::capi::t_last_error;

uint32_t status_of(gpreempt::kfd::QueueOutcome o) {
  switch (o) {
    case gpreempt::kfd::QueueOutcome::kDone: return GPREEMPT_QUEUE_OK;
    case gpreempt::kfd::QueueOutcome::kInvalid: return GPREEMPT_QUEUE_INVALID;
    case gpreempt::kfd::QueueOutcome::kError: return GPREEMPT_QUEUE_ERROR;
  }
  return GPREEMPT_QUEUE_ERROR;
}

// Count of done queues, status array, and a detail message for a partial failure.
int report_batch(gpreempt_ctx* ctx, const gpreempt::preempt::BatchOutcome& o, uint32_t* status,
                 const char* verb) {
  ctx->last_ioctl_ns = o.timing.ioctl_ns;
  ctx->last_total_ns = o.timing.total_ns;
  if (status)
    for (std::size_t i = 0; i < o.result.queues.size(); ++i)
      status[i] = status_of(o.result.queues[i].outcome);
  if (!o.result.all_done())
    t_last_error = std::string(verb) + " " + std::to_string(o.result.count) + " of " +
                   std::to_string(o.result.queues.size()) + " queues;" +
                   gpreempt::kfd::outcome_summary(o.result);
  return static_cast<int>(o.result.count);
}

// max_engine_clk_fcompute of one GPU; Error(ENODEV / ENODATA) when there is none.
uint32_t gpu_clock(uint32_t gpu_id) {
  auto nodes = gpreempt::discovery::read_gpu_nodes();
  auto gpu = gpreempt::discovery::find_gpu(nodes, gpu_id);
  if (!gpu) throw Error(ENODEV, "no GPU with gpu_id " + std::to_string(gpu_id) + " in the KFD topology");
  if (gpu->max_engine_clk_fcompute == 0)
    throw Error(ENODATA, "GPU " + std::to_string(gpu_id) + " reports no max_engine_clk_fcompute");
  return gpu->max_engine_clk_fcompute;
}

// GPREEMPT_ATTACH_REQUIRE_QUEUES: the kernel would create an empty KFD process for a traced pid
// that never opened /dev/kfd (docs/kfd-interface.md#debug-trap-prologue, step 4), so an attach to
// the wrong pid "succeeds" without it.
void require_queues(int32_t pid) {
  std::string comm;
  {
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "r");
    char buf[64] = "";
    if (f) {
      if (std::fgets(buf, sizeof buf, f)) comm = buf;
      std::fclose(f);
    }
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  }
  const std::string who = "pid " + std::to_string(pid) + (comm.empty() ? "" : " (" + comm + ")");
  std::vector<gpreempt::discovery::SysfsQueue> queues;
  try {
    queues = gpreempt::discovery::read_process_queues(pid);
  } catch (const Error& e) {
    if (e.code() == ESRCH)
      throw Error(ESRCH, who + " has not opened /dev/kfd (no KFD process); `gpreempt ps` lists the "
                               "processes that have");
    throw;
  }
  if (queues.empty())
    throw Error(ENODATA, who + " has no GPU queues yet (its runtime creates them when it first uses "
                               "the GPU)");
}

std::optional<std::vector<uint32_t>> id_vector(const uint32_t* ids, uint32_t count) {
  if (count && !ids) throw Error(EINVAL, "ids is NULL but count is " + std::to_string(count));
  return std::vector<uint32_t>(ids, ids + count);
}

}  // namespace

extern "C" {

uint32_t gpreempt_version(void) {
  return (GPREEMPT_VERSION_MAJOR << 16) | (GPREEMPT_VERSION_MINOR << 8) | GPREEMPT_VERSION_PATCH;
}

const char* gpreempt_version_string(void) {
  return GPREEMPT_VERSION_STRING;
}

const char* gpreempt_strerror(int err) {
  if (err < 0) err = err == INT_MIN ? INT_MAX : -err;  // -INT_MIN overflows
  thread_local std::string text;
  const char* name = strerrorname_np(err);
  text = std::string(name ? name : "E?") + ": " + gpreempt::errno_text(err);
  return text.c_str();
}

const char* gpreempt_last_error(void) { return t_last_error.c_str(); }

int gpreempt_ctx_open(const struct gpreempt_ctx_opts* opts, gpreempt_ctx** out) {
  return guarded([&] {
    if (!out) throw Error(EINVAL, "gpreempt_ctx_open: out is NULL");
    gpreempt::preempt::ContextOptions o;
    const auto local = gpreempt::capi::read_opts(
        opts, GPREEMPT_OFFSETOFEND(struct gpreempt_ctx_opts, flags), "gpreempt_ctx_opts");
    // A field the caller's size ends inside of is absent, not torn (libbpf OPTS_HAS).
    if (GPREEMPT_OPTS_HAS(local, device_path) && local.device_path) o.device_path = local.device_path;
    o.watchdog_bound = std::chrono::milliseconds(GPREEMPT_WATCHDOG_DEFAULT_MS);
    if (GPREEMPT_OPTS_HAS(local, watchdog_ms))
      o.watchdog_bound = std::chrono::milliseconds(
          local.watchdog_ms == UINT32_MAX ? 0 : local.watchdog_ms);  // 0 (or UINT32_MAX): off
    if (GPREEMPT_OPTS_HAS(local, flags))
      o.handle_signals = !(local.flags & GPREEMPT_CTX_NO_SIGNAL_HANDLERS);
    auto ctx = std::make_unique<gpreempt_ctx>();
    ctx->core = std::make_unique<gpreempt::preempt::Context>(o);
    *out = ctx.release();
    return 0;
  });
}

void gpreempt_ctx_close(gpreempt_ctx* ctx) {
  if (!ctx) return;
  try {
    ctx->core.reset();  // detaches every target
    for (gpreempt_target* t : ctx->targets) delete t;
    delete ctx;
  } catch (...) {
  }
}

int gpreempt_kfd_version(gpreempt_ctx* ctx, uint32_t* major, uint32_t* minor) {
  return guarded([&] {
    if (!ctx || !major || !minor) throw Error(EINVAL, "gpreempt_kfd_version: NULL argument");
    auto v = ctx->core->kfd_version();
    *major = v.major;
    *minor = v.minor;
    return 0;
  });
}

int gpreempt_get_stats(gpreempt_ctx* ctx, struct gpreempt_stats* out) {
  return guarded([&] {
    if (!ctx || !out) throw Error(EINVAL, "gpreempt_get_stats: NULL argument");
    if (out->sz < sizeof(size_t))
      throw Error(EINVAL, "gpreempt_stats.sz must be set to sizeof(struct gpreempt_stats)");
    auto s = ctx->core->stats();
    struct gpreempt_stats full = {};
    full.sz = std::min(out->sz, sizeof full);
    full.suspend_calls = s.suspend_calls;
    full.resume_calls = s.resume_calls;
    full.watchdog_resumes = s.watchdog_resumes;
    full.forced_disables = s.forced_disables;
    full.signals_handled = s.signals_handled;
    full.control_calls = s.hop.calls;
    full.last_hop_ns = s.hop.last_hop_ns;
    full.max_hop_ns = s.hop.max_hop_ns;
    full.total_hop_ns = s.hop.total_hop_ns;
    full.last_ioctl_ns = ctx->last_ioctl_ns;
    full.last_total_ns = ctx->last_total_ns;
    full.watchdog_ms = static_cast<uint64_t>(ctx->core->watchdog_bound().count());
    std::memcpy(out, &full, full.sz);
    return 0;
  });
}

int gpreempt_take_notice(gpreempt_ctx* ctx, int32_t* pid, char* buf, size_t len) {
  return guarded([&] {
    if (!ctx) throw Error(EINVAL, "gpreempt_take_notice: ctx is NULL");
    std::lock_guard lock(ctx->notice_mutex);
    for (auto& n : ctx->core->take_notices()) ctx->pending.push_back(std::move(n));
    if (ctx->pending.empty()) return 0;
    const auto n = std::move(ctx->pending.front());
    ctx->pending.pop_front();
    if (pid) *pid = n.pid;
    if (buf && len) std::snprintf(buf, len, "%s", n.message.c_str());
    return 1;
  });
}

int gpreempt_attach(gpreempt_ctx* ctx, int32_t pid, gpreempt_target** out) {
  return gpreempt_attach_opts(ctx, pid, nullptr, out);
}

int gpreempt_attach_opts(gpreempt_ctx* ctx, int32_t pid, const struct gpreempt_attach_opts* opts,
                         gpreempt_target** out) {
  return guarded([&] {
    const auto o = gpreempt::capi::read_opts(
        opts, GPREEMPT_OFFSETOFEND(struct gpreempt_attach_opts, flags), "gpreempt_attach_opts");
    const uint32_t flags = GPREEMPT_OPTS_HAS(o, flags) ? o.flags : 0;
    if (flags & ~uint32_t{GPREEMPT_ATTACH_REQUIRE_QUEUES})
      throw Error(EINVAL, "gpreempt_attach_opts.flags has unknown bits " + std::to_string(flags));
    if (!ctx || !out) throw Error(EINVAL, "gpreempt_attach: NULL argument");
    if (flags & GPREEMPT_ATTACH_REQUIRE_QUEUES) require_queues(pid);
    auto t = std::make_unique<gpreempt_target>(gpreempt_target{ctx, pid});
    ctx->core->attach(pid);
    {
      std::lock_guard lock(ctx->targets_mutex);
      ctx->targets.insert(t.get());
    }
    *out = t.release();
    return 0;
  });
}

int gpreempt_detach(gpreempt_target* target) {
  return guarded([&] {
    if (!target) throw Error(EINVAL, "gpreempt_detach: target is NULL");
    std::unique_ptr<gpreempt_target> owned(target);
    {
      std::lock_guard lock(owned->ctx->targets_mutex);
      owned->ctx->targets.erase(target);
    }
    try {
      owned->ctx->core->detach(owned->pid);
    } catch (const Error& e) {
      // Already gone (the process exited and the context dropped it): detached either way.
      if (e.code() != ENOENT) throw;
    }
    return 0;
  });
}

int32_t gpreempt_target_pid(const gpreempt_target* target) {
  if (!target) return fail(EINVAL, "gpreempt_target_pid: target is NULL");
  return target->pid;
}

int gpreempt_list_queues(gpreempt_target* target, struct gpreempt_queue* out, uint32_t capacity) {
  return guarded([&] {
    if (!target) throw Error(EINVAL, "gpreempt_list_queues: target is NULL");
    if (capacity && !out) throw Error(EINVAL, "gpreempt_list_queues: out is NULL but capacity > 0");
    auto queues = target->ctx->core->queues(target->pid);
    for (std::size_t i = 0; i < queues.size() && i < capacity; ++i) {
      const auto& q = queues[i].info;
      struct gpreempt_queue e = {};
      e.queue_id = q.queue_id;
      e.gpu_id = q.gpu_id;
      e.type = q.queue_type;
      e.ring_size = q.ring_size;
      e.ring_base_address = q.ring_base_address;
      e.read_pointer_address = q.read_pointer_address;
      e.write_pointer_address = q.write_pointer_address;
      e.ctx_save_restore_address = q.ctx_save_restore_address;
      e.ctx_save_restore_size = q.ctx_save_restore_size;
      e.suspended = queues[i].suspended ? 1 : 0;
      e.exception_status = q.exception_status;
      out[i] = e;
    }
    return static_cast<int>(queues.size());
  });
}

int gpreempt_suspend_queues(gpreempt_target* target, const uint32_t* ids, uint32_t count,
                            uint32_t grace, uint32_t* status) {
  return guarded([&] {
    if (!target) throw Error(EINVAL, "gpreempt_suspend_queues: target is NULL");
    auto o = target->ctx->core->suspend(target->pid, id_vector(ids, count), grace);
    return report_batch(target->ctx, o, status, "suspended");
  });
}

int gpreempt_resume_queues(gpreempt_target* target, const uint32_t* ids, uint32_t count,
                           uint32_t* status) {
  return guarded([&] {
    if (!target) throw Error(EINVAL, "gpreempt_resume_queues: target is NULL");
    auto o = target->ctx->core->resume(target->pid, id_vector(ids, count));
    return report_batch(target->ctx, o, status, "resumed");
  });
}

int gpreempt_suspend_process(gpreempt_target* target, uint32_t grace) {
  return guarded([&] {
    if (!target) throw Error(EINVAL, "gpreempt_suspend_process: target is NULL");
    auto o = target->ctx->core->suspend(target->pid, std::nullopt, grace);
    return report_batch(target->ctx, o, nullptr, "suspended");
  });
}

int gpreempt_resume_process(gpreempt_target* target) {
  return guarded([&] {
    if (!target) throw Error(EINVAL, "gpreempt_resume_process: target is NULL");
    auto o = target->ctx->core->resume(target->pid, std::nullopt);
    return report_batch(target->ctx, o, nullptr, "resumed");
  });
}

int gpreempt_find_queues_by_process(int32_t pid, struct gpreempt_sysfs_queue* out,
                                    uint32_t capacity) {
  return guarded([&] {
    if (capacity && !out)
      throw Error(EINVAL, "gpreempt_find_queues_by_process: out is NULL but capacity > 0");
    auto queues = gpreempt::discovery::read_process_queues(pid);
    for (std::size_t i = 0; i < queues.size() && i < capacity; ++i) {
      struct gpreempt_sysfs_queue e = {};
      e.queue_id = queues[i].queue_id;
      e.gpu_id = queues[i].gpu_id;
      e.type = queues[i].type;
      e.ring_size = queues[i].size;
      out[i] = e;
    }
    return static_cast<int>(queues.size());
  });
}

int gpreempt_print_my_queues(void) {
  return guarded([&] {
    const int pid = static_cast<int>(::getpid());
    std::vector<gpreempt::discovery::SysfsQueue> queues;
    try {
      queues = gpreempt::discovery::read_process_queues(pid);
    } catch (const Error& e) {
      if (e.code() != ESRCH) throw;  // no KFD process yet: the same answer as no queues
    }
    if (queues.empty()) {
      // Called early (before the model touched the GPU) this used to print nothing at all.
      std::printf("gpreempt: process %d has no KFD queues yet (queues appear when the GPU runtime "
                  "first uses the GPU)\n", pid);
      std::fflush(stdout);
      return 0;
    }
    std::printf("gpreempt: process %d has %zu KFD queue(s)\n", pid, queues.size());
    for (const auto& q : queues)
      std::printf("  queue %u  gpu_id %u  type %s  ring %llu bytes\n", q.queue_id, q.gpu_id,
                  gpreempt::discovery::sysfs_queue_type_name(q.type).c_str(),
                  static_cast<unsigned long long>(q.size));
    std::fflush(stdout);
    return static_cast<int>(queues.size());
  });
}

uint32_t gpreempt_grace_from_us(uint64_t us, uint32_t clock_mhz) {
  t_last_error.clear();
  if (clock_mhz > GPREEMPT_CLOCK_MHZ_MAX) {
    t_last_error = "gpreempt_grace_from_us: clock_mhz " + std::to_string(clock_mhz) +
                   " is not a GPU clock (as an int: " + std::to_string(static_cast<int32_t>(clock_mhz)) +
                   ", an unchecked error of gpreempt_gpu_clock_mhz()?); the driver default is used";
    return GPREEMPT_GRACE_DEFAULT;
  }
  return gpreempt::kfd::grace_units_from_us(us, clock_mhz);
}

int gpreempt_gpu_max_clock_mhz(uint32_t gpu_id, uint32_t* mhz) {
  return guarded([&] {
    if (!mhz) throw Error(EINVAL, "gpreempt_gpu_max_clock_mhz: mhz is NULL");
    *mhz = gpu_clock(gpu_id);
    return 0;
  });
}

int gpreempt_suspend_opts(gpreempt_target* target, const uint32_t* ids, uint32_t count,
                          uint32_t* status, const struct gpreempt_suspend_opts* opts) {
  return guarded([&] {
    const auto o = gpreempt::capi::read_opts(
        opts, GPREEMPT_OFFSETOFEND(struct gpreempt_suspend_opts, grace_units), "gpreempt_suspend_opts");
    if (!target) throw Error(EINVAL, "gpreempt_suspend_opts: target is NULL");
    std::optional<std::vector<uint32_t>> wanted;
    if (ids || count) wanted = id_vector(ids, count);
    uint32_t grace = GPREEMPT_GRACE_DEFAULT;
    const uint64_t us = GPREEMPT_OPTS_HAS(o, grace_us) ? o.grace_us : 0;
    const uint32_t units = GPREEMPT_OPTS_HAS(o, grace_units) ? o.grace_units : 0;
    auto& core = *target->ctx->core;
    if (us) {
      // The clock of the GPUs these queues live on; every GPU gets at least `us`.
      uint32_t clock = 0;
      const auto nodes = gpreempt::discovery::read_gpu_nodes();
      for (const auto& q : core.queues(target->pid)) {
        if (wanted && std::find(wanted->begin(), wanted->end(), q.info.queue_id) == wanted->end())
          continue;
        if (auto gpu = gpreempt::discovery::find_gpu(nodes, q.info.gpu_id))
          clock = std::max(clock, gpu->max_engine_clk_fcompute);
      }
      if (clock == 0)
        throw Error(ENODATA, "grace_us needs the GPU clock (max_engine_clk_fcompute) of the target's "
                             "queues and the KFD topology has none; give grace_units instead");
      grace = gpreempt::kfd::grace_units_from_us(us, clock);
    } else if (units) {
      grace = units;
    }
    auto result = core.suspend(target->pid, wanted, grace);
    return report_batch(target->ctx, result, wanted ? status : nullptr, "suspended");
  });
}

int gpreempt_gpu_clock_mhz(uint32_t gpu_id) {
  return guarded([&] { return static_cast<int>(gpu_clock(gpu_id)); });
}

}  // extern "C"
