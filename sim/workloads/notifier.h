// The hook an external controller (the preemption demo) uses to follow the online client:
// every request's start (before its kernels are dispatched) and end (when its last kernel
// completed), as one text line each:
//   "start <request> <pid> <monotonic_ns>\n"
//   "end <request> <pid> <monotonic_ns> <latency_ns>\n"
// Delivered over a Unix socket (stream or seqpacket; optionally waiting for a one-byte reply
// after "start", so the controller can preempt before the request's kernels go out) or a FIFO.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gpreempt::workloads {

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // Early hint: the request `request` will start in about `in_us` (its pre-processing begins).
  virtual void request_expected(uint64_t /*request*/, int64_t /*in_us*/) {}
  virtual void request_start(uint64_t request, int64_t monotonic_ns) = 0;
  virtual void request_end(uint64_t request, int64_t monotonic_ns, int64_t latency_ns) = 0;
};

std::string format_start(uint64_t request, int pid, int64_t monotonic_ns);
std::string format_end(uint64_t request, int pid, int64_t monotonic_ns, int64_t latency_ns);

// Connects to `path` (a listening Unix socket or a FIFO with a reader). wait_for_ack: after each
// "start" line, block until the peer sends one byte back (sockets only).
// Throws std::runtime_error naming the path and the reason.
std::unique_ptr<RequestObserver> open_notifier(const std::string& path, bool wait_for_ack);

}  // namespace gpreempt::workloads
