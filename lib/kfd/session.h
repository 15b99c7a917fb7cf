// One KFD debug session on one target process: ENABLE with a non-blocking event pipe, answer the
// target's runtime events, snapshot its queues, suspend and resume them, DISABLE.
//
// This class knows nothing about threads or ptrace: its owner must call it from the thread that is
// the target's ptrace tracer (lib/preempt's control thread). Failures throw gpreempt::Error with a
// message from kfd/dbg_trap.h; per-queue outcomes of suspend/resume are returned, never thrown.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kfd/driver.h"

namespace gpreempt::kfd {

struct QueueInfo {
  uint32_t queue_id = 0;
  uint32_t gpu_id = 0;
  uint32_t queue_type = 0;  // uapi KFD_IOC_QUEUE_TYPE_*
  uint32_t ring_size = 0;   // bytes
  uint64_t ring_base_address = 0;
  uint64_t read_pointer_address = 0;
  uint64_t write_pointer_address = 0;
  uint64_t ctx_save_restore_address = 0;
  uint32_t ctx_save_restore_size = 0;
  uint64_t exception_status = 0;  // as the snapshot saw it, before clearing EC_QUEUE_NEW
};

// What happened to one requested queue, decoded from bits 30/31 of its array entry
// (docs/kfd-interface.md#suspend-queues).
enum class QueueOutcome : uint8_t {
  kDone,     // suspended (or resumed), newly or already
  kInvalid,  // bit 31: no such queue, still new (EC_QUEUE_NEW not cleared) or being destroyed
  kError,    // bit 30: the scheduler failed to preempt/remap (timeout, reset); state unknown
};

// The one text of each outcome: "ok", "invalid", "error" (JSON, Python, tables).
const char* outcome_name(QueueOutcome o);
// What it means, for people: "no such queue, still new, or being destroyed"; "" for kDone.
const char* outcome_meaning(QueueOutcome o);

struct QueueStatus {
  uint32_t queue_id = 0;
  QueueOutcome outcome = QueueOutcome::kInvalid;
};

struct BatchResult {
  long count = 0;  // the ioctl's return value: queues now suspended (resp. running)
  std::vector<QueueStatus> queues;
  std::size_t invalid = 0;
  std::size_t errors = 0;
  // Non-empty when the kernel's count disagrees with the per-queue bits (ROCdbgapi asserts
  // count + #invalid == n); the batch must then be treated as failed.
  std::string inconsistency;
  bool all_done() const { return invalid == 0 && errors == 0 && inconsistency.empty(); }
};

struct SessionEvents {
  bool new_queues = false;      // EC_QUEUE_NEW on some queue: refresh the snapshot
  bool deleted_queues = false;  // EC_DEVICE_QUEUE_DELETE on some GPU
  bool runtime_enabled = false;
  bool runtime_disabled = false;  // the kernel resumed every suspended queue of the target
  unsigned runtime_acks = 0;      // SEND_RUNTIME_EVENT(EC_PROCESS_RUNTIME) answers sent
};

// Exceptions we subscribe to: runtime start/stop (must be answered), new queues, deleted queues.
inline constexpr uint64_t kSessionExceptionMask = KFD_EC_MASK(EC_PROCESS_RUNTIME) |
                                                  KFD_EC_MASK(EC_QUEUE_NEW) |
                                                  KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE);

class DebugSession {
 public:
  DebugSession(KfdDriver& driver, uint32_t pid);
  ~DebugSession();  // closes the pipe; does not DISABLE (the owner decides, see disable())
  DebugSession(const DebugSession&) = delete;
  DebugSession& operator=(const DebugSession&) = delete;

  uint32_t pid() const { return pid_; }
  // ENABLE with the write end of a fresh O_NONBLOCK pipe and 16 bytes of runtime info.
  void enable();
  // Answers pending events (a runtime start/stop the target is blocked on), then DISABLE (resumes
  // every suspended queue of the target if its runtime is enabled). Returns 0 or -errno of
  // DISABLE; never throws. Idempotent.
  long disable();
  bool enabled() const { return enabled_; }
  uint32_t runtime_state() const { return runtime_state_; }
  // Read end of the event pipe: readable when the kernel raised a subscribed exception.
  int event_fd() const { return pipe_[0]; }

  // Drain the pipe, then QUERY_DEBUG_EVENT until EAGAIN, answering EC_PROCESS_RUNTIME.
  SessionEvents process_events();
  // Whether the kernel has written to the event pipe since the last drain. The kernel writes a
  // byte for every subscribed exception it raises, so an empty pipe means nothing to query —
  // which keeps QUERY_DEBUG_EVENT off the suspend path.
  bool events_pending() const;

  // GET_QUEUE_SNAPSHOT with the EC_QUEUE_NEW clear mask and the two-call sizing protocol. Clearing
  // EC_QUEUE_NEW is what makes new queues suspendable.
  const std::vector<QueueInfo>& refresh_snapshot();
  const std::vector<QueueInfo>& last_snapshot() const { return snapshot_; }

  // SUSPEND_QUEUES. `grace` in the kernel's unit (1K GPU clocks; KFD_USE_DEFAULT_GRACE_PERIOD),
  // `clear_mask` = exception bits cleared on the suspended queues. Ids must be distinct.
  // The default clears nothing: ROCdbgapi clears the wave exceptions because it reports them
  // itself; a preemption controller is not the target's debugger and must not swallow them.
  BatchResult suspend(std::span<const uint32_t> ids, uint32_t grace, uint64_t clear_mask = 0);
  // RESUME_QUEUES. Ids must be distinct.
  BatchResult resume(std::span<const uint32_t> ids);

 private:
  void handle_runtime_event(SessionEvents& ev);

  KfdDriver& driver_;
  uint32_t pid_;
  int pipe_[2] = {-1, -1};
  bool enabled_ = false;
  uint32_t runtime_state_ = DEBUG_RUNTIME_STATE_DISABLED;
  std::vector<QueueInfo> snapshot_;
};

// The queues of `r` that are not done, grouped by outcome, for messages:
// " invalid (no such queue, still new, or being destroyed): [7]; error (...): [1];". Empty when
// every queue is done.
std::string outcome_summary(const BatchResult& r);

// Decodes the written-back array of a SUSPEND/RESUME call (exposed for tests).
BatchResult decode_batch(std::span<const uint32_t> requested, std::span<const uint32_t> written,
                         long count, const char* op);

}  // namespace gpreempt::kfd
