// A fake KFD for unit tests of the core: the debug-trap semantics of FACTS §6-§10 for the ops the
// library uses, on in-memory processes, plus fault injection. It runs in the test process, so it
// writes the event pipe and the caller's buffers directly.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "kfd/driver.h"
#include "ptrace/tracer.h"
#include "common/error.h"

namespace gpreempt::testing {

using namespace gpreempt::kfd;

struct FakeQueue {
  uint32_t id = 0;
  uint32_t gpu_id = 0x1234;
  uint64_t status = KFD_EC_MASK(EC_QUEUE_NEW);
  bool suspended = false;
  bool destroying = false;
};

struct FakeProcess {
  uint32_t runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
  bool debug_enabled = false;
  uint64_t enable_mask = 0;
  uint64_t process_status = 0;
  uint64_t device_status = 0;
  int event_fd = -1;
  std::deque<FakeQueue> queues;  // newest first
  uint32_t next_id = 0;
  bool gone = false;
  unsigned runtime_acks = 0;
};

class FakeKfd final : public KfdDriver {
 public:
  Version version{1, 22};
  std::map<uint32_t, FakeProcess> procs;
  std::vector<uint32_t> ops;            // every DBG_TRAP op, in order
  std::vector<uint32_t> snapshot_caps;  // num_queues(in) of every GET_QUEUE_SNAPSHOT
  std::vector<kfd_ioctl_dbg_trap_args> args_in;  // every DBG_TRAP's arguments as they came in
  std::vector<std::vector<uint32_t>> arrays_in;  // every SUSPEND/RESUME id array as it came in
  // Fail this many next calls with EINTR. Like the kernel, an interrupted call has already done
  // part of its work and copies its arguments back (FACTS §2): SUSPEND/RESUME entries carry bit 31
  // (the first one bit 30 as well, a runlist update cut short), and GET_QUEUE_SNAPSHOT has reset
  // num_queues to 0 and entry_size to what it would write.
  int eintr_next = 0;
  std::map<uint32_t, long> fail_op;     // op → -errno to return (persistent)
  bool error_bit_next_suspend = false;  // scheduler failure on the next SUSPEND (bit 30)
  long count_skew = 0;                  // added to SUSPEND's return value
  std::recursive_mutex mu;

  FakeProcess& proc(uint32_t pid) { return procs[pid]; }

  // The target creates a queue (as CREATE_QUEUE would): newest first, EC_QUEUE_NEW set.
  // announce = false stops where the kernel still holds the process lock: the queue exists (sysfs
  // shows it) but the debugger's event is raised only after the ioctl drops the lock.
  uint32_t create_queue(uint32_t pid, bool announce = true) {
    std::lock_guard lock(mu);
    auto& p = proc(pid);
    FakeQueue q;
    q.id = p.next_id++;
    p.queues.push_front(q);
    if (announce) raise(p, KFD_EC_MASK(EC_QUEUE_NEW));
    return q.id;
  }
  void destroy_queue(uint32_t pid, uint32_t id) {
    std::lock_guard lock(mu);
    auto& p = proc(pid);
    for (auto it = p.queues.begin(); it != p.queues.end(); ++it)
      if (it->id == id) {
        p.queues.erase(it);
        break;
      }
    p.device_status |= KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE);
    raise(p, KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE));
  }
  // Runtime enable/disable by the target while debugged: raises EC_PROCESS_RUNTIME.
  void set_runtime(uint32_t pid, uint32_t state) {
    std::lock_guard lock(mu);
    auto& p = proc(pid);
    if (state == DEBUG_RUNTIME_STATE_DISABLED)
      for (auto& q : p.queues) q.suspended = false;
    p.runtime_state = state;
    if (p.debug_enabled) {
      p.process_status |= KFD_EC_MASK(EC_PROCESS_RUNTIME);
      raise(p, KFD_EC_MASK(EC_PROCESS_RUNTIME));
    }
  }
  bool suspended(uint32_t pid, uint32_t id) {
    std::lock_guard lock(mu);
    for (auto& q : proc(pid).queues)
      if (q.id == id) return q.suspended;
    return false;
  }
  std::size_t count_ops(uint32_t op) {
    std::lock_guard lock(mu);
    std::size_t n = 0;
    for (auto o : ops) n += o == op;
    return n;
  }

  long get_version(Version& out) override {
    out = version;
    return 0;
  }
  std::string describe() const override { return "fake-kfd"; }

  long dbg_trap(kfd_ioctl_dbg_trap_args& a) override {
    std::lock_guard lock(mu);
    ops.push_back(a.op);
    args_in.push_back(a);
    if (a.op == KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT) snapshot_caps.push_back(a.queue_snapshot.num_queues);
    if (uint32_t* ids = id_array(a)) arrays_in.emplace_back(ids, ids + id_count(a));
    if (eintr_next > 0) {
      --eintr_next;
      if (uint32_t* ids = id_array(a)) {
        for (uint32_t i = 0; i < id_count(a); ++i) ids[i] |= KFD_DBG_QUEUE_INVALID_MASK;
        if (id_count(a) > 0) ids[0] |= KFD_DBG_QUEUE_ERROR_MASK;
      }
      if (a.op == KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT) {
        a.queue_snapshot.num_queues = 0;
        a.queue_snapshot.entry_size =
            std::min<uint32_t>(a.queue_snapshot.entry_size, sizeof(kfd_queue_snapshot_entry));
      }
      return -EINTR;
    }
    if (auto it = fail_op.find(a.op); it != fail_op.end()) return it->second;
    // ENABLE by a tracer creates the target's KFD process if it has none (FACTS §7 step 4).
    if (a.op == KFD_IOC_DBG_TRAP_ENABLE) procs.try_emplace(a.pid);
    auto pit = procs.find(a.pid);
    if (pit == procs.end() || pit->second.gone) return -ESRCH;
    FakeProcess& p = pit->second;
    if (a.op != KFD_IOC_DBG_TRAP_ENABLE && !p.debug_enabled) return -EINVAL;
    const bool hw_op = a.op >= 4 && a.op <= 10;
    if (hw_op && p.runtime_state != DEBUG_RUNTIME_STATE_ENABLED) return -EPERM;
    switch (a.op) {
      case KFD_IOC_DBG_TRAP_ENABLE: {
        if (p.debug_enabled) return -EALREADY;
        kfd_runtime_info ri{};
        ri.runtime_state = p.runtime_state;
        std::memcpy(reinterpret_cast<void*>(a.enable.rinfo_ptr), &ri,
                    std::min<std::size_t>(a.enable.rinfo_size, sizeof ri));
        a.enable.rinfo_size = sizeof ri;
        p.debug_enabled = true;
        p.enable_mask = a.enable.exception_mask;
        p.event_fd = ::dup(static_cast<int>(a.enable.dbg_fd));
        return 0;
      }
      case KFD_IOC_DBG_TRAP_DISABLE:
        if (p.runtime_state == DEBUG_RUNTIME_STATE_ENABLED)
          for (auto& q : p.queues) q.suspended = false;
        p.debug_enabled = false;
        if (p.event_fd >= 0) ::close(p.event_fd);
        p.event_fd = -1;
        p.process_status = p.device_status = 0;
        for (auto& q : p.queues) q.status = 0;
        return 0;
      case KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT:
        if (a.send_runtime_event.exception_mask & KFD_EC_MASK(EC_PROCESS_RUNTIME)) ++p.runtime_acks;
        return 0;
      case KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED:
        p.enable_mask = a.set_exceptions_enabled.exception_mask;
        return 0;
      case KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT: {
        const uint64_t clear = a.query_debug_event.exception_mask;
        for (auto& q : p.queues)
          if (q.status & p.enable_mask) {
            a.query_debug_event.exception_mask = q.status;
            a.query_debug_event.queue_id = q.id;
            a.query_debug_event.gpu_id = q.gpu_id;
            q.status &= ~clear;
            return 0;
          }
        if (p.device_status & p.enable_mask) {
          a.query_debug_event.exception_mask = p.device_status;
          a.query_debug_event.gpu_id = 0x1234;
          a.query_debug_event.queue_id = 0;
          p.device_status &= ~clear;
          return 0;
        }
        if (p.process_status & p.enable_mask) {
          a.query_debug_event.exception_mask = p.process_status;
          a.query_debug_event.gpu_id = a.query_debug_event.queue_id = 0;
          p.process_status &= ~clear;
          return 0;
        }
        return -EAGAIN;
      }
      case KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO: {
        auto& e = a.query_exception_info;
        if (e.exception_code != EC_PROCESS_RUNTIME) return -EINVAL;
        if (!(p.process_status & KFD_EC_MASK(EC_PROCESS_RUNTIME))) return -ENODATA;
        kfd_runtime_info ri{};
        ri.runtime_state = p.runtime_state;
        std::memcpy(reinterpret_cast<void*>(e.info_ptr), &ri,
                    std::min<std::size_t>(e.info_size, sizeof ri));
        e.info_size = sizeof ri;
        if (e.clear_exception) p.process_status &= ~KFD_EC_MASK(EC_PROCESS_RUNTIME);
        return 0;
      }
      case KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT: {
        auto& s = a.queue_snapshot;
        const uint32_t cap = s.num_queues;
        if (s.entry_size == 0) return -EINVAL;
        const uint32_t in_size = s.entry_size;
        s.entry_size = std::min<uint32_t>(in_size, sizeof(kfd_queue_snapshot_entry));
        uint32_t written = 0;
        for (auto& q : p.queues) {
          if (written < cap) {
            kfd_queue_snapshot_entry e{};
            e.exception_status = q.status;
            e.queue_id = q.id;
            e.gpu_id = q.gpu_id;
            e.ring_base_address = 0x7f0000000000ull + q.id * 0x100000ull;
            e.read_pointer_address = 0x7e0000000080ull + q.id * 0x1000ull;
            e.write_pointer_address = 0x7e0000000038ull + q.id * 0x1000ull;
            e.ring_size = 4096;
            e.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
            std::memcpy(reinterpret_cast<char*>(s.snapshot_buf_ptr) + written * in_size, &e,
                        s.entry_size);
            q.status &= ~s.exception_mask;
            ++written;
          }
        }
        s.num_queues = static_cast<uint32_t>(p.queues.size());
        return 0;
      }
      case KFD_IOC_DBG_TRAP_SUSPEND_QUEUES:
      case KFD_IOC_DBG_TRAP_RESUME_QUEUES: {
        const bool suspend = a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES;
        auto* ids = reinterpret_cast<uint32_t*>(suspend ? a.suspend_queues.queue_array_ptr
                                                        : a.resume_queues.queue_array_ptr);
        const uint32_t n = suspend ? a.suspend_queues.num_queues : a.resume_queues.num_queues;
        std::vector<FakeQueue*> matched(n, nullptr);
        std::set<FakeQueue*> used;
        for (uint32_t i = 0; i < n; ++i) {
          // q_array_get_index(): only bit 31 is ignored when matching; an entry with bit 30 set
          // names no queue.
          const uint32_t id = ids[i] & ~KFD_DBG_QUEUE_INVALID_MASK;
          ids[i] = id | KFD_DBG_QUEUE_INVALID_MASK;
          for (auto& q : p.queues)
            if (q.id == id && !used.count(&q)) {
              if (suspend && ((q.status & KFD_EC_MASK(EC_QUEUE_NEW)) || q.destroying)) break;
              matched[i] = &q;
              used.insert(&q);
              break;
            }
        }
        long count = 0;
        const bool fail = suspend && error_bit_next_suspend;
        error_bit_next_suspend = false;
        for (uint32_t i = 0; i < n; ++i) {
          if (!matched[i]) continue;
          if (fail) {
            // The kernel marks the queue suspended before the runlist rebuild that failed.
            matched[i]->suspended = suspend;
            ids[i] |= KFD_DBG_QUEUE_ERROR_MASK;
            ids[i] &= ~KFD_DBG_QUEUE_INVALID_MASK;
            continue;
          }
          matched[i]->suspended = suspend;
          ids[i] &= ~KFD_DBG_QUEUE_INVALID_MASK;
          ++count;
        }
        return suspend ? count + count_skew : count;
      }
      default:
        return -EINVAL;
    }
  }

 private:
  static uint32_t* id_array(const kfd_ioctl_dbg_trap_args& a) {
    if (a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES)
      return reinterpret_cast<uint32_t*>(a.suspend_queues.queue_array_ptr);
    if (a.op == KFD_IOC_DBG_TRAP_RESUME_QUEUES)
      return reinterpret_cast<uint32_t*>(a.resume_queues.queue_array_ptr);
    return nullptr;
  }
  static uint32_t id_count(const kfd_ioctl_dbg_trap_args& a) {
    return a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES ? a.suspend_queues.num_queues
                                                   : a.resume_queues.num_queues;
  }
  void raise(FakeProcess& p, uint64_t bits) {
    if (p.debug_enabled && (bits & p.enable_mask) && p.event_fd >= 0) {
      char c = '.';
      ssize_t r = ::write(p.event_fd, &c, 1);
      (void)r;
    }
  }
};

// Records what the core asks of ptrace.
class FakeTracer final : public gpreempt::ptrace::Tracer {
 public:
  std::mutex mu;
  std::vector<std::string> log;
  std::map<int, int> seize_error;  // pid → errno to throw
  std::set<int> gone;

  void seize(int pid) override {
    std::lock_guard lock(mu);
    if (auto it = seize_error.find(pid); it != seize_error.end())
      throw Error(it->second, "fake seize failure for " + std::to_string(pid));
    log.push_back("seize " + std::to_string(pid));
  }
  gpreempt::ptrace::TraceeState service(int pid) override {
    std::lock_guard lock(mu);
    return gone.count(pid) ? gpreempt::ptrace::TraceeState::kGone
                           : gpreempt::ptrace::TraceeState::kRunning;
  }
  std::set<int> wont_stop;  // pids whose detach times out until removed (uninterruptible sleep)

  bool detach(int pid) noexcept override {
    std::lock_guard lock(mu);
    if (wont_stop.count(pid)) {
      log.push_back("detach pending " + std::to_string(pid));
      return false;
    }
    log.push_back("detach " + std::to_string(pid));
    return true;
  }
  bool finish_detach(int pid) noexcept override {
    std::lock_guard lock(mu);
    if (wont_stop.count(pid)) return false;
    log.push_back("detach " + std::to_string(pid));
    return true;
  }
};

// Lets a test keep the fakes (and inspect them) after the context that used them is destroyed.
class DriverRef final : public KfdDriver {
 public:
  explicit DriverRef(KfdDriver& inner) : inner_(inner) {}
  long get_version(Version& out) override { return inner_.get_version(out); }
  long dbg_trap(kfd_ioctl_dbg_trap_args& a) override { return inner_.dbg_trap(a); }
  std::string describe() const override { return inner_.describe(); }

 private:
  KfdDriver& inner_;
};

class TracerRef final : public gpreempt::ptrace::Tracer {
 public:
  explicit TracerRef(gpreempt::ptrace::Tracer& inner) : inner_(inner) {}
  void seize(int pid) override { inner_.seize(pid); }
  gpreempt::ptrace::TraceeState service(int pid) override { return inner_.service(pid); }
  bool detach(int pid) noexcept override { return inner_.detach(pid); }
  bool finish_detach(int pid) noexcept override { return inner_.finish_detach(pid); }

 private:
  gpreempt::ptrace::Tracer& inner_;
};

}  // namespace gpreempt::testing
