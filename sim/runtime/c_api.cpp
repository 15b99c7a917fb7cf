// The C API: opaque handles over the C++ classes, no exception crosses it.
#include <cerrno>
#include <new>
#include <string>

#include "simrt/simrt.h"
#include "simrt/simrt.hpp"

struct simrt_runtime {
  simrt::Runtime rt;
  explicit simrt_runtime(const simrt::Options& o) : rt(o) {}
};
struct simrt_queue {
  std::unique_ptr<simrt::Queue> q;
};
struct simrt_signal {
  simrt::Signal s;
  explicit simrt_signal(int64_t v) : s(v) {}
};

namespace {

thread_local std::string last_error;

template <typename F>
int guarded(F&& f) {
  try {
    f();
    last_error.clear();
    return 0;
  } catch (const simrt::Error& e) {
    last_error = e.what();
    return -e.code();
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return -ENOMEM;
  } catch (const std::exception& e) {
    last_error = e.what();
    return -EIO;
  }
}

}  // namespace

extern "C" {

int simrt_open(const simrt_options* opts, simrt_runtime** out) {
  if (!out) return -EINVAL;
  simrt::Options o;
  if (opts && opts->size >= offsetof(simrt_options, gpu_id) + sizeof(opts->gpu_id)) {
    if (opts->kfd_path) o.kfd_path = opts->kfd_path;
    o.gpu_id = opts->gpu_id;
  }
  return guarded([&] { *out = new simrt_runtime(o); });
}

void simrt_close(simrt_runtime* rt) { delete rt; }
uint32_t simrt_gpu_id(const simrt_runtime* rt) { return rt->rt.gpu_id(); }
void simrt_kfd_version(const simrt_runtime* rt, uint32_t* major, uint32_t* minor) {
  if (major) *major = rt->rt.kfd_major();
  if (minor) *minor = rt->rt.kfd_minor();
}

int simrt_queue_create(simrt_runtime* rt, uint32_t priority, uint32_t ring_packets,
                       simrt_queue** out) {
  if (!rt || !out) return -EINVAL;
  return guarded([&] { *out = new simrt_queue{rt->rt.create_queue(priority, ring_packets)}; });
}

int simrt_queue_destroy(simrt_queue* q) {
  if (!q) return -EINVAL;
  const int r = guarded([&] { q->q->destroy(); });
  if (r == 0) delete q;
  return r;
}

uint32_t simrt_queue_id(const simrt_queue* q) { return q->q->id(); }
uint64_t simrt_queue_hwq_address(const simrt_queue* q) { return q->q->hwq_address(); }
uint64_t simrt_queue_ring_address(const simrt_queue* q) { return q->q->ring_address(); }

int simrt_dispatch(simrt_queue* q, const simrt_kernel* k, simrt_signal* completion) {
  if (!q || !k) return -EINVAL;
  return guarded([&] {
    simrt::Kernel kk;
    kk.name = k->name ? k->name : "";
    for (int d = 0; d < 3; ++d) {
      kk.grid[d] = k->grid[d];
      kk.workgroup[d] = k->workgroup[d];
    }
    kk.wg_cost_ns = k->wg_cost_ns;
    q->q->dispatch(kk, completion ? &completion->s : nullptr);
  });
}

int simrt_barrier_and(simrt_queue* q, simrt_signal* const* deps, size_t n,
                      simrt_signal* completion) {
  if (!q || (n && !deps)) return -EINVAL;
  return guarded([&] {
    std::vector<simrt::Signal*> d;
    for (size_t i = 0; i < n; ++i) d.push_back(deps[i] ? &deps[i]->s : nullptr);
    q->q->barrier_and(d, completion ? &completion->s : nullptr);
  });
}

int simrt_signal_create(simrt_runtime* rt, int64_t initial, simrt_signal** out) {
  if (!rt || !out) return -EINVAL;
  return guarded([&] { *out = new simrt_signal(initial); });
}
void simrt_signal_destroy(simrt_signal* s) { delete s; }
int64_t simrt_signal_load(const simrt_signal* s) { return s->s.load(); }
void simrt_signal_store(simrt_signal* s, int64_t value) { s->s.store(value); }
int simrt_signal_wait_eq(const simrt_signal* s, int64_t value, uint64_t timeout_ns) {
  const auto t = timeout_ns == UINT64_MAX
                     ? std::chrono::nanoseconds::max()
                     : std::chrono::nanoseconds(static_cast<int64_t>(std::min<uint64_t>(timeout_ns, INT64_MAX)));
  bool done = false;
  const int r = guarded([&] { done = s->s.wait_eq(value, t); });
  return r != 0 ? r : done ? 0 : -ETIMEDOUT;
}
uint64_t simrt_signal_start_ts(const simrt_signal* s) { return s->s.start_ts(); }
uint64_t simrt_signal_end_ts(const simrt_signal* s) { return s->s.end_ts(); }

const char* simrt_last_error(void) { return last_error.c_str(); }

}  // extern "C"
