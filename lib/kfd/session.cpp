#include "kfd/session.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <unordered_set>

#include "common/error.h"
#include "kfd/dbg_trap.h"

namespace gpreempt::kfd {

namespace {

kfd_ioctl_dbg_trap_args make_args(uint32_t pid, uint32_t op) {
  kfd_ioctl_dbg_trap_args a{};
  a.pid = pid;
  a.op = op;
  return a;
}

void require_distinct(std::span<const uint32_t> ids, const char* op) {
  std::unordered_set<uint32_t> seen;
  for (uint32_t id : ids) {
    if (id & ~KFD_DBG_QUEUE_ID_MASK)
      throw Error(EINVAL, std::string(op) + ": queue id " + std::to_string(id) +
                              " uses bits 30/31, which the kernel reserves for per-queue status");
    if (!seen.insert(id).second)
      throw Error(EINVAL, std::string(op) + ": queue id " + std::to_string(id) +
                              " is listed twice (the kernel would report the duplicate invalid)");
  }
}

}  // namespace

DebugSession::DebugSession(KfdDriver& driver, uint32_t pid) : driver_(driver), pid_(pid) {}

DebugSession::~DebugSession() {
  for (int& fd : pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void DebugSession::enable() {
  if (enabled_) return;
  if (pipe_[0] < 0 && ::pipe2(pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
    int e = errno;
    throw Error(e, "cannot create the debug event pipe: " + errno_text(e));
  }
  kfd_runtime_info rinfo{};
  auto a = make_args(pid_, KFD_IOC_DBG_TRAP_ENABLE);
  a.enable.exception_mask = kSessionExceptionMask;
  a.enable.rinfo_ptr = reinterpret_cast<uintptr_t>(&rinfo);
  a.enable.rinfo_size = sizeof rinfo;
  a.enable.dbg_fd = static_cast<uint32_t>(pipe_[1]);
  dbg_trap_checked(driver_, a);
  enabled_ = true;
  runtime_state_ = rinfo.runtime_state;
}

long DebugSession::disable() {
  if (!enabled_) return 0;
  // DISABLE does not release a target blocked in runtime enable/disable waiting for our
  // SEND_RUNTIME_EVENT (docs/kfd-interface.md#runtime-enable): answer a pending EC_PROCESS_RUNTIME
  // first, or it hangs for good.
  try {
    process_events();
  } catch (const Error&) {
    // ESRCH (target gone) or a failed query: DISABLE is still the right next step.
  }
  auto a = make_args(pid_, KFD_IOC_DBG_TRAP_DISABLE);
  long r = dbg_trap_retry(driver_, a);
  // After ESRCH there is no session left to disable: the target is gone.
  if (r == 0 || r == -ESRCH || r == -EINVAL) enabled_ = false;
  return r;
}

void DebugSession::handle_runtime_event(SessionEvents& ev) {
  // Read the new runtime state and clear the bit in one call; then answer, or the target stays
  // blocked in its RUNTIME_ENABLE (start-up) or runtime-disable (shutdown)
  // (docs/kfd-interface.md#runtime-enable).
  kfd_runtime_info rinfo{};
  auto q = make_args(pid_, KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO);
  q.query_exception_info.info_ptr = reinterpret_cast<uintptr_t>(&rinfo);
  q.query_exception_info.info_size = sizeof rinfo;
  q.query_exception_info.source_id = 0;
  q.query_exception_info.exception_code = EC_PROCESS_RUNTIME;
  q.query_exception_info.clear_exception = 1;
  long r = dbg_trap_retry(driver_, q);
  uint32_t state;
  if (r >= 0) {
    state = rinfo.runtime_state;
  } else {
    // Could not read it: clear the bit through QUERY_DEBUG_EVENT so the drain loop ends, and infer
    // the new state as the opposite of the old one (enable and disable alternate).
    auto c = make_args(pid_, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
    c.query_debug_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
    dbg_trap_retry(driver_, c);
    state = runtime_state_ == DEBUG_RUNTIME_STATE_DISABLED ? DEBUG_RUNTIME_STATE_ENABLED
                                                           : DEBUG_RUNTIME_STATE_DISABLED;
  }
  if (state == DEBUG_RUNTIME_STATE_DISABLED) {
    ev.runtime_disabled = true;
  } else {
    ev.runtime_enabled = true;
  }
  runtime_state_ = state;
  auto s = make_args(pid_, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT);
  s.send_runtime_event.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
  dbg_trap_checked(driver_, s);
  ++ev.runtime_acks;
}

bool DebugSession::events_pending() const {
  if (pipe_[0] < 0) return false;
  pollfd p{pipe_[0], POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

SessionEvents DebugSession::process_events() {
  SessionEvents ev;
  if (!enabled_) return ev;
  // The pipe carries no payload, only "look" (docs/kfd-interface.md#event-file): drain it, then
  // ask.
  char buf[256];
  while (::read(pipe_[0], buf, sizeof buf) > 0) {
  }
  // A bound on the loop so that a driver which keeps reporting the same source cannot hang us.
  for (int i = 0; i < 4096; ++i) {
    auto a = make_args(pid_, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT);
    a.query_debug_event.exception_mask = kSessionExceptionMask & ~KFD_EC_MASK(EC_PROCESS_RUNTIME);
    long r = dbg_trap_retry(driver_, a);
    if (r == -EAGAIN) return ev;
    if (r < 0) throw dbg_trap_error(a.op, pid_, static_cast<int>(-r));
    const uint64_t status = a.query_debug_event.exception_mask;
    if (status & KFD_EC_MASK(EC_QUEUE_NEW)) ev.new_queues = true;
    if (status & KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE)) ev.deleted_queues = true;
    if (status & KFD_EC_MASK(EC_PROCESS_RUNTIME)) handle_runtime_event(ev);
  }
  throw Error(EPROTO, "QUERY_DEBUG_EVENT on pid " + std::to_string(pid_) +
                          " kept reporting events after 4096 queries");
}

const std::vector<QueueInfo>& DebugSession::refresh_snapshot() {
  std::size_t capacity = snapshot_.size() + 16;
  std::vector<kfd_queue_snapshot_entry> buf;
  for (;;) {
    buf.assign(capacity, kfd_queue_snapshot_entry{});
    auto a = make_args(pid_, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT);
    a.queue_snapshot.exception_mask = KFD_EC_MASK(EC_QUEUE_NEW);
    a.queue_snapshot.snapshot_buf_ptr = reinterpret_cast<uintptr_t>(buf.data());
    a.queue_snapshot.num_queues = static_cast<uint32_t>(capacity);
    a.queue_snapshot.entry_size = sizeof(kfd_queue_snapshot_entry);
    dbg_trap_checked(driver_, a);
    if (a.queue_snapshot.entry_size != sizeof(kfd_queue_snapshot_entry))
      throw Error(EPROTO, "GET_QUEUE_SNAPSHOT on pid " + std::to_string(pid_) +
                              " returned entry_size " + std::to_string(a.queue_snapshot.entry_size) +
                              ", expected " + std::to_string(sizeof(kfd_queue_snapshot_entry)));
    const std::size_t total = a.queue_snapshot.num_queues;
    if (total > capacity) {  // the buffer was too small: queues were created meanwhile
      capacity = total + 16;
      continue;
    }
    snapshot_.clear();
    for (std::size_t i = 0; i < total; ++i) {
      const auto& e = buf[i];
      QueueInfo q;
      q.queue_id = e.queue_id;
      q.gpu_id = e.gpu_id;
      q.queue_type = e.queue_type;
      q.ring_size = e.ring_size;
      q.ring_base_address = e.ring_base_address;
      q.read_pointer_address = e.read_pointer_address;
      q.write_pointer_address = e.write_pointer_address;
      q.ctx_save_restore_address = e.ctx_save_restore_address;
      q.ctx_save_restore_size = e.ctx_save_restore_area_size;
      q.exception_status = e.exception_status;
      snapshot_.push_back(q);
    }
    return snapshot_;
  }
}

const char* outcome_name(QueueOutcome o) {
  switch (o) {
    case QueueOutcome::kDone: return "ok";
    case QueueOutcome::kInvalid: return "invalid";
    case QueueOutcome::kError: return "error";
  }
  return "error";
}

const char* outcome_meaning(QueueOutcome o) {
  switch (o) {
    case QueueOutcome::kDone: return "";
    case QueueOutcome::kInvalid: return "no such queue, still new, or being destroyed";
    case QueueOutcome::kError: return "the scheduler failed to preempt or remap: timeout or GPU reset";
  }
  return "";
}

std::string outcome_summary(const BatchResult& r) {
  std::string s;
  for (QueueOutcome o : {QueueOutcome::kInvalid, QueueOutcome::kError}) {
    std::string ids;
    for (const auto& q : r.queues)
      if (q.outcome == o) ids += (ids.empty() ? "" : ",") + std::to_string(q.queue_id);
    if (!ids.empty())
      s += std::string(" ") + outcome_name(o) + " (" + outcome_meaning(o) + "): [" + ids + "];";
  }
  return s;
}

BatchResult decode_batch(std::span<const uint32_t> requested, std::span<const uint32_t> written,
                         long count, const char* op) {
  BatchResult res;
  res.count = count;
  std::size_t done = 0;
  for (std::size_t i = 0; i < requested.size(); ++i) {
    QueueStatus st{requested[i], QueueOutcome::kDone};
    // Error first: every entry starts with bit 31 and a failure ORs in bit 30 without clearing
    // it (MES removal failure, docs/kfd-interface.md#suspend-queues steps 1-2), so 30|31 is a queue
    // in unknown state.
    if (written[i] & KFD_DBG_QUEUE_ERROR_MASK) {
      st.outcome = QueueOutcome::kError;
      ++res.errors;
    } else if (written[i] & KFD_DBG_QUEUE_INVALID_MASK) {
      st.outcome = QueueOutcome::kInvalid;
      ++res.invalid;
    } else {
      ++done;
    }
    res.queues.push_back(st);
  }
  // ROCdbgapi's invariant is count + #invalid == n; entries with bit 30 are not counted by the
  // kernel either, so the general form is count == #done.
  if (count < 0 || static_cast<std::size_t>(count) != done)
    res.inconsistency = std::string(op) + " returned " + std::to_string(count) + " but " +
                        std::to_string(done) + " of " + std::to_string(requested.size()) +
                        " entries carry neither the invalid (31) nor the error (30) bit";
  return res;
}

BatchResult DebugSession::suspend(std::span<const uint32_t> ids, uint32_t grace,
                                  uint64_t clear_mask) {
  require_distinct(ids, "SUSPEND_QUEUES");
  if (ids.empty()) return {};
  std::vector<uint32_t> array(ids.begin(), ids.end());
  auto a = make_args(pid_, KFD_IOC_DBG_TRAP_SUSPEND_QUEUES);
  a.suspend_queues.exception_mask = clear_mask;
  a.suspend_queues.queue_array_ptr = reinterpret_cast<uintptr_t>(array.data());
  a.suspend_queues.num_queues = static_cast<uint32_t>(array.size());
  a.suspend_queues.grace_period = grace;
  const long r = dbg_trap_retry(driver_, a);
  if (r < 0) throw dbg_trap_error(a.op, pid_, static_cast<int>(-r));
  return decode_batch(ids, array, r, "SUSPEND_QUEUES");
}

BatchResult DebugSession::resume(std::span<const uint32_t> ids) {
  require_distinct(ids, "RESUME_QUEUES");
  if (ids.empty()) return {};
  std::vector<uint32_t> array(ids.begin(), ids.end());
  auto a = make_args(pid_, KFD_IOC_DBG_TRAP_RESUME_QUEUES);
  a.resume_queues.queue_array_ptr = reinterpret_cast<uintptr_t>(array.data());
  a.resume_queues.num_queues = static_cast<uint32_t>(array.size());
  const long r = dbg_trap_retry(driver_, a);
  if (r < 0) throw dbg_trap_error(a.op, pid_, static_cast<int>(-r));
  return decode_batch(ids, array, r, "RESUME_QUEUES");
}

}  // namespace gpreempt::kfd
