// Tracing of every driver call (ROCdbgapi style): which operation, its inputs and outputs, the
// result and how long it took. Off by default; GPREEMPT_TRACE=1 sends records to stderr, and a
// program can install its own sink.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpreempt {

struct TraceRecord {
  const char* layer = "";  // "kfd", "ptrace", "control"
  std::string call;        // e.g. "DBG_TRAP SUSPEND_QUEUES pid=1234"
  std::string in;          // inputs, key=value
  std::string out;         // outputs after the call, key=value
  long result = 0;         // return value (>= 0) or -errno
  uint64_t duration_ns = 0;
};

using TraceSink = std::function<void(const TraceRecord&)>;

// The sink for this process: the one set by set_trace_sink, else stderr when GPREEMPT_TRACE is set
// to something other than "0", else none. Thread-safe.
void set_trace_sink(TraceSink sink);
bool trace_enabled();
void emit_trace(const TraceRecord& record);

}  // namespace gpreempt
