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
#include "common/error.h"
#include "gpreempt/gpreempt.h"
#include "kfd/grace.h"
#include "discovery/proc_parse.h"
#include "discovery/process_discovery.h"
#include "discovery/topology.h"
#include "preempt/context.h"

using gpreempt::Error;

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
#define GPREEMPT_STR2(x) #x
#define GPREEMPT_STR(x) GPREEMPT_STR2(x)
  return GPREEMPT_STR(GPREEMPT_VERSION_MAJOR) "." GPREEMPT_STR(GPREEMPT_VERSION_MINOR) "." GPREEMPT_STR(
      GPREEMPT_VERSION_PATCH);
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
    if (opts) {
      // Read only the fields the caller's struct has (libbpf OPTS).
      struct gpreempt_ctx_opts local = {};
      if (opts->sz < sizeof(size_t))
        throw Error(EINVAL, "gpreempt_ctx_opts.sz is " + std::to_string(opts->sz) +
                                "; set it to sizeof(struct gpreempt_ctx_opts)");
      std::memcpy(&local, opts, std::min(opts->sz, sizeof local));
      // A field the caller's size ends inside of is absent, not torn (libbpf OPTS_HAS).
      const auto has = [&](std::size_t offset, std::size_t size) { return opts->sz >= offset + size; };
      if (!has(offsetof(gpreempt_ctx_opts, device_path), sizeof local.device_path))
        local.device_path = nullptr;
      if (!has(offsetof(gpreempt_ctx_opts, watchdog_ms), sizeof local.watchdog_ms))
        local.watchdog_ms = 0;
      if (!has(offsetof(gpreempt_ctx_opts, flags), sizeof local.flags)) local.flags = 0;
      if (opts->sz > sizeof local) {
        const auto* extra = reinterpret_cast<const unsigned char*>(opts) + sizeof local;
        for (std::size_t i = 0; i < opts->sz - sizeof local; ++i)
          if (extra[i])
            throw Error(EINVAL, "gpreempt_ctx_opts has fields this library version (" +
                                    std::string(gpreempt_version_string()) + ") does not know");
      }
      if (local.device_path) o.device_path = local.device_path;
      if (local.watchdog_ms == UINT32_MAX)
        o.watchdog_bound = std::chrono::milliseconds(0);
      else if (local.watchdog_ms)
        o.watchdog_bound = std::chrono::milliseconds(local.watchdog_ms);
      o.handle_signals = !(local.flags & GPREEMPT_CTX_NO_SIGNAL_HANDLERS);
    }
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
  return guarded([&] {
    if (!ctx || !out) throw Error(EINVAL, "gpreempt_attach: NULL argument");
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
    auto queues = gpreempt::discovery::read_process_queues(pid);
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
  return gpreempt::kfd::grace_units_from_us(us, clock_mhz);
}

int gpreempt_gpu_clock_mhz(uint32_t gpu_id) {
  return guarded([&] {
    auto nodes = gpreempt::discovery::read_gpu_nodes();
    auto gpu = gpreempt::discovery::find_gpu(nodes, gpu_id);
    if (!gpu) throw Error(ENODEV, "no GPU with gpu_id " + std::to_string(gpu_id) + " in the KFD topology");
    if (gpu->max_engine_clk_fcompute == 0)
      throw Error(ENODATA, "GPU " + std::to_string(gpu_id) + " reports no max_engine_clk_fcompute");
    return static_cast<int>(gpu->max_engine_clk_fcompute);
  });
}

}  // extern "C"
