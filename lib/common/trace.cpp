#include "common/trace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace gpreempt {

namespace {
std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<TraceSink>& sink_slot() {
  static std::shared_ptr<TraceSink> slot = [] {
    const char* v = std::getenv("GPREEMPT_TRACE");
    if (!v || !*v || std::strcmp(v, "0") == 0) return std::shared_ptr<TraceSink>();
    return std::make_shared<TraceSink>([](const TraceRecord& r) {
      std::fprintf(stderr, "gpreempt-trace %s %s in{%s} out{%s} = %ld (%llu ns)\n", r.layer,
                   r.call.c_str(), r.in.c_str(), r.out.c_str(), r.result,
                   static_cast<unsigned long long>(r.duration_ns));
    });
  }();
  return slot;
}
}  // namespace

void set_trace_sink(TraceSink sink) {
  std::lock_guard lock(sink_mutex());
  sink_slot() = sink ? std::make_shared<TraceSink>(std::move(sink)) : nullptr;
}

bool trace_enabled() {
  std::lock_guard lock(sink_mutex());
  return static_cast<bool>(sink_slot());
}

void emit_trace(const TraceRecord& record) {
  std::shared_ptr<TraceSink> sink;
  {
    std::lock_guard lock(sink_mutex());
    sink = sink_slot();
  }
  if (sink) (*sink)(record);
}

}  // namespace gpreempt
