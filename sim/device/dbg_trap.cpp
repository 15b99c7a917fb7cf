// AMDKFD_IOC_DBG_TRAP: the common prologue, every operation, event-file writes and the
// debugger-exit rule (docs/kfd-interface.md#debug-trap-prologue to #session-lifetime).
#include <gpreempt/kfd_abi.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "device_state.h"
#include "topology_caps.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;
using detail::CallPtr;
using detail::Outcome;
using detail::Process;
using detail::ProcessPtr;
using detail::Queue;

namespace {

kfd_ioctl_dbg_trap_args load_args(const CallPtr& c) {
  kfd_ioctl_dbg_trap_args a;
  std::memcpy(&a, c->kbuf.data(), sizeof(a));
  return a;
}
void store_args(const CallPtr& c, const kfd_ioctl_dbg_trap_args& a) {
  std::memcpy(c->kbuf.data(), &a, sizeof(a));
}

bool is_hw_op(uint32_t op) {
  return op >= KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE && op <= KFD_IOC_DBG_TRAP_SET_FLAGS;
}

// q_array_get_index(): first entry whose id (bit 31 ignored) names the queue.
int array_index(const std::vector<uint32_t>& ids, uint32_t queue_id) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    if ((ids[i] & ~KFD_DBG_QUEUE_INVALID_MASK) == queue_id) return static_cast<int>(i);
  return -1;
}

bool ec_is_queue(uint32_t ec) {
  return ec >= 1 && ec < EC_MAX && (KFD_EC_MASK(ec) & KFD_EC_MASK_QUEUE);
}
bool ec_is_device(uint32_t ec) {
  return ec >= 1 && ec < EC_MAX && (KFD_EC_MASK(ec) & KFD_EC_MASK_DEVICE);
}
bool ec_is_process(uint32_t ec) {
  return ec >= 1 && ec < EC_MAX && (KFD_EC_MASK(ec) & KFD_EC_MASK_PROCESS);
}

}  // namespace

// ---- activation / deactivation (kfd_dbg_trap_activate / _deactivate)
// -------------------------------

std::vector<KfdDevice::State::Step> KfdDevice::State::activate_steps(const ProcessPtr& p) {
  // debug_refresh_runlist() per device; a device without an active runlist has nothing to unmap.
  // The first failure marks the session ENABLED_ERROR (ENABLED_BUSY for -EBUSY) and stops.
  auto failed = std::make_shared<bool>(false);
  std::vector<Step> steps;
  for (const auto& d : p->devices) {
    Step s;
    s.gpu_id = d.gpu_id;
    s.grace_period = KFD_USE_DEFAULT_GRACE_PERIOD;
    const uint32_t gpu = d.gpu_id;
    s.skip = [this, failed, gpu] { return *failed || runnable(gpu).empty(); };
    s.after = [p, failed](int err) {
      if (!err) return;
      *failed = true;
      p->runtime_state =
          err == -EBUSY ? DEBUG_RUNTIME_STATE_ENABLED_BUSY : DEBUG_RUNTIME_STATE_ENABLED_ERROR;
    };
    steps.push_back(std::move(s));
  }
  return steps;
}

std::vector<KfdDevice::State::Step> KfdDevice::State::deactivate_steps(const ProcessPtr& p) {
  std::vector<Step> steps;
  // resume_queues(target, 0, NULL): every queue matches; one remap per device that has queues.
  for (const auto& d : p->devices) {
    const uint32_t gpu = d.gpu_id;
    Step s;
    s.gpu_id = gpu;
    s.grace_period = KFD_USE_DEFAULT_GRACE_PERIOD;
    s.skip = [p, gpu] {
      return std::none_of(p->queues.begin(), p->queues.end(),
                          [&](const Queue& q) { return q.gpu_id == gpu; });
    };
    s.before = [p, gpu] {
      for (auto& q : p->queues)
        if (q.gpu_id == gpu) q.suspended = false;
    };
    s.after = [this, p](int err) {
      if (!err) wake_destroy_waiters(p);
    };
    steps.push_back(std::move(s));
  }
  // Address watches cleared, wave launch mode normal, flags 0; then each runlist refreshed.
  Step reset;
  reset.no_runlist = true;
  reset.before = [this, p] {
    clear_address_watches(*p);
    p->wave_launch_mode = KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL;
    p->trap_flags = 0;
  };
  steps.push_back(std::move(reset));
  for (const auto& d : p->devices) {
    const uint32_t gpu = d.gpu_id;
    Step s;
    s.gpu_id = gpu;
    s.grace_period = KFD_USE_DEFAULT_GRACE_PERIOD;
    s.skip = [this, gpu] { return runnable(gpu).empty(); };
    steps.push_back(std::move(s));
  }
  return steps;
}

void KfdDevice::State::write_wave_state_headers(const Process& p) {
  // copy_context_work_handler(): after a suspend, every compute queue's context-save-area header
  // gets the used control-stack and wave-state sizes read back from its MQD. The device does not
  // see waves (the GPU model owns them), so it reports the MQD as the driver built it: nothing
  // used, both offsets at the end of the control stack.
  for (const auto& q : p.queues) {
    if (!q.is_compute() || !q.ctx_save_addr) continue;
    kfd_context_save_area_header h{};
    h.wave_state.control_stack_offset = q.ctl_stack_size;
    h.wave_state.control_stack_size = 0;
    h.wave_state.wave_state_offset = q.ctl_stack_size;
    h.wave_state.wave_state_size = 0;
    env.write_memory(p.pid, q.ctx_save_addr, &h.wave_state, sizeof(h.wave_state));
  }
}

void KfdDevice::State::clear_address_watches(Process& p) {
  for (auto& d : p.devices) {
    for (uint32_t i = 0; i < detail::kAddressWatchSlots; ++i)
      if (d.watch_used[i]) device_watch_ids[d.gpu_id] &= ~(1u << i);
    d.watch_used.fill(false);
  }
}

void KfdDevice::State::finish_disable(Process& p) {
  if (p.event_file) env.release_file(*p.event_file);
  p.event_file.reset();
  if (p.debugger_pid)
    if (auto dbg = find_process(p.debugger_pid)) --dbg->debugged_process_count;
  p.debugger_pid = 0;
  p.debug_trap_enabled = false;
  // kfd_dbg_clean_exception_status(): queue, device and process status all cleared.
  p.exception_status = 0;
  for (auto& d : p.devices) d.exception_status = 0;
  for (auto& q : p.queues) q.exception_status = 0;
}

void KfdDevice::State::debugger_exited(int debugger_pid) {
  ProcessPtr dbg = find_process(debugger_pid);
  // kfd_process_notifier_release_internal(): only a process that counts debugged targets looks.
  if (!dbg || dbg->debugged_process_count <= 0) return;
  std::vector<ProcessPtr> targets;
  for (auto& [pid, t] : processes)
    if (pid != debugger_pid && t->debug_trap_enabled && t->debugger_pid == debugger_pid)
      targets.push_back(t);
  for (auto& t : targets) {
    // A DISABLE on the debugger's behalf, without anyone to answer (no token).
    auto call = std::make_shared<detail::Call>();
    call->caller = {debugger_pid, debugger_pid};
    call->nr = NR_DBG_TRAP;
    call->usize = sizeof(kfd_ioctl_dbg_trap_args);
    call->kbuf.assign(128, 0);
    kfd_ioctl_dbg_trap_args a{};
    a.pid = static_cast<uint32_t>(t->pid);
    a.op = KFD_IOC_DBG_TRAP_DISABLE;
    store_args(call, a);
    dispatch(call);  // nobody waits for the answer
    if (dbg->debugged_process_count <= 0) break;
  }
}

// ---- the ioctl ---------------------------------------------------------------------------------

Outcome KfdDevice::State::dbg_trap(const CallPtr& call) {
  auto a = load_args(call);
  const Caller& c = call->caller;

  // §7.1 secondary contexts: not simulated (CREATE_PROCESS is not implemented).
  // §7.2
  if (options.sched_policy == 2) return Outcome::done(-EINVAL);
  // §7.3
  auto tgid = env.tgid_of(static_cast<int>(a.pid));
  if (!tgid) return Outcome::done(-ESRCH);
  // §7.4
  ProcessPtr t = find_process(*tgid);
  if (!t && a.op == KFD_IOC_DBG_TRAP_ENABLE && static_cast<int>(a.pid) != c.tid &&
      env.tracer_of(static_cast<int>(a.pid)) == c.tid) {
    t = create_process(*tgid);
    if (!t) return Outcome::done(-EINVAL);
  }
  if (!t) return Outcome::done(-ESRCH);
  // §7.6 ptrace_parent(target leader) must be the calling thread; self and DISABLE exempt.
  if (t->pid != c.pid && a.op != KFD_IOC_DBG_TRAP_DISABLE && env.tracer_of(t->pid) != c.tid)
    return Outcome::done(-EPERM);
  // §7.7
  if (!lock_or_queue(*t, call)) return Outcome::parked();
  if (a.op != KFD_IOC_DBG_TRAP_ENABLE && !t->debug_trap_enabled) return Outcome::done(-EINVAL);
  // §7.8
  if (t->runtime_state != DEBUG_RUNTIME_STATE_ENABLED && is_hw_op(a.op))
    return Outcome::done(-EPERM);
  // §7.9
  if (a.op == KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH ||
      a.op == KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH) {
    uint32_t gpu = a.op == KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH
                       ? a.set_node_address_watch.gpu_id
                       : a.clear_node_address_watch.gpu_id;
    if (!t->device(gpu)) return Outcome::done(-ENODEV);
  }

  switch (a.op) {
    case KFD_IOC_DBG_TRAP_ENABLE: {
      if (t->pid != c.pid) t->debugger_pid = c.pid;  // recorded even when EALREADY follows
      if (t->debug_trap_enabled) return Outcome::done(-EALREADY);
      // Every simulated GPU is SOC15 (GFX9) and GWS is not simulated: no ENODEV/EBUSY here.
      const uint32_t copy_size = std::min<uint32_t>(a.enable.rinfo_size, sizeof(kfd_runtime_info));
      auto f = env.acquire_file(c.pid, static_cast<int>(a.enable.dbg_fd));
      if (!f) return Outcome::done(-EBADF);
      t->event_file = f;
      std::vector<Step> steps;
      if (t->runtime_state == DEBUG_RUNTIME_STATE_ENABLED) steps = activate_steps(t);
      auto efault = std::make_shared<bool>(false);
      Step copy;
      copy.no_runlist = true;
      copy.expand = [this, t, c, a, copy_size, efault]() -> std::vector<Step> {
        t->debug_trap_enabled = true;
        if (t->debugger_pid)
          if (auto dbg = find_process(t->debugger_pid)) ++dbg->debugged_process_count;
        kfd_runtime_info ri{t->r_debug, t->runtime_state, t->ttmp_setup};
        if (copy_size && !env.write_memory(c.pid, a.enable.rinfo_ptr, &ri, copy_size)) {
          // The session stays enabled, but its hardware state is deactivated
          // (docs/kfd-interface.md#enable-and-disable).
          *efault = true;
          return deactivate_steps(t);
        }
        return {};
      };
      steps.push_back(std::move(copy));
      return run_locked(t, call, std::move(steps), [t, call, a, efault]() -> std::optional<long> {
        auto out = a;
        out.enable.rinfo_size = sizeof(kfd_runtime_info);
        store_args(call, out);
        if (*efault) return -EFAULT;
        t->exception_enable_mask = a.enable.exception_mask;
        return 0;
      });
    }

    case KFD_IOC_DBG_TRAP_DISABLE: {
      // kfd_dbg_trap_disable(): a healthy session is deactivated (queues resumed); one whose
      // activation failed (BUSY/ERROR) is only put back to ENABLED.
      std::vector<Step> steps;
      if (t->runtime_state == DEBUG_RUNTIME_STATE_ENABLED)
        steps = deactivate_steps(t);
      else if (t->runtime_state != DEBUG_RUNTIME_STATE_DISABLED)
        t->runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
      return run_locked(t, call, std::move(steps), [this, t]() -> std::optional<long> {
        finish_disable(*t);
        return 0;
      });
    }

    case KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT: {
      uint64_t mask = a.send_runtime_event.exception_mask;
      if (mask & KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION)) {
        if (!t->device(a.send_runtime_event.gpu_id)) return Outcome::done(-ENODEV);
        mask &= ~KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION);
      }
      if (mask & KFD_EC_MASK(EC_PROCESS_RUNTIME)) {
        // up(&runtime_enable_sema)
        if (t->runtime_waiter) {
          CallPtr w = std::move(t->runtime_waiter);
          t->runtime_waiter.reset();
          t->runtime_retry = false;
          if (t->runtime_state == DEBUG_RUNTIME_STATE_DISABLED) t->ttmp_setup = 0;
          complete(w, 0);
        } else {
          ++t->runtime_sema;
        }
        mask &= ~KFD_EC_MASK(EC_PROCESS_RUNTIME);
      }
      if (mask) {
        // kfd_send_exception_to_runtime(): OR into the error payload the queue's context-save-
        // area header names (its event is not simulated). An unknown queue or an unreadable
        // header is silently skipped: the call returns 0 regardless.
        const Queue* q = t->queue(a.send_runtime_event.queue_id);
        kfd_context_save_area_header h{};
        uint64_t payload = 0;
        if (q && q->ctx_save_addr && env.read_memory(t->pid, q->ctx_save_addr, &h, sizeof(h)) &&
            env.read_memory(t->pid, h.err_payload_addr, &payload, sizeof(payload))) {
          payload |= mask;
          env.write_memory(t->pid, h.err_payload_addr, &payload, sizeof(payload));
        }
      }
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED: {
      t->exception_enable_mask = a.set_exceptions_enabled.exception_mask;
      uint64_t found = t->exception_status;
      for (const auto& q : t->queues) found |= q.exception_status;
      for (const auto& d : t->devices) found |= d.exception_status;
      if (t->exception_enable_mask & found) signal(*t);
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE: {
      // kfd_dbg_validate_trap_override_request(): the supported mask starts as all ones and is
      // written back on every path; a bad mode fails before the device narrows it.
      auto& o = a.launch_override;
      if (o.override_mode != KFD_DBG_TRAP_OVERRIDE_OR &&
          o.override_mode != KFD_DBG_TRAP_OVERRIDE_REPLACE) {
        o.support_request_mask = 0xffffffffu;
        store_args(call, a);
        return Outcome::done(-EINVAL);
      }
      const uint32_t supported = caps::wave_launch_trap_override_supported(profile);
      const uint32_t request = o.support_request_mask, bits = o.enable_mask;
      o.support_request_mask = supported;
      if (request & ~supported) {
        store_args(call, a);
        return Outcome::done(-EACCES);
      }
      // set_wave_launch_trap_override(): requested bits replaced, the others kept; the mode
      // (OR / REPLACE) tells the hardware how to combine them with the wave's own mask.
      const uint32_t prev = t->wave_launch_override_mask;
      t->wave_launch_override_mask = (bits & request) | (prev & ~request);
      t->wave_launch_override_mode = o.override_mode;
      o.enable_mask = prev;
      store_args(call, a);
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE: {
      const uint32_t m = a.launch_mode.launch_mode;
      if (m != KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL && m != KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT &&
          m != KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG)
        return Outcome::done(-EINVAL);
      t->wave_launch_mode = m;
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_SUSPEND_QUEUES: {
      const auto s = a.suspend_queues;
      std::vector<uint32_t> ids(s.num_queues);
      // memdup_user(): the only negative return. A NULL array with entries would oops the
      // kernel; the simulator answers -EFAULT instead.
      if (s.num_queues && (!s.queue_array_ptr ||
                           !env.read_memory(c.pid, s.queue_array_ptr, ids.data(), ids.size() * 4)))
        return Outcome::done(-EFAULT);
      auto shared_ids = std::make_shared<std::vector<uint32_t>>(std::move(ids));
      for (auto& id : *shared_ids) id |= KFD_DBG_QUEUE_INVALID_MASK;
      auto total = std::make_shared<long>(0);
      std::vector<Step> steps;
      for (const auto& d : t->devices) {
        const uint32_t gpu = d.gpu_id;
        auto matched = std::make_shared<std::vector<std::pair<int, uint32_t>>>();  // idx, qid
        int per_device = 0;
        for (auto& q : t->queues) {
          if (q.gpu_id != gpu) continue;
          const int idx = array_index(*shared_ids, q.id);
          if (idx < 0) continue;
          matched->emplace_back(idx, q.id);
          // suspend_single_queue()
          if (!q.suspended) {
            if ((q.exception_status & KFD_EC_MASK(EC_QUEUE_NEW)) || q.being_destroyed)
              continue;  // -EBUSY: the entry stays INVALID
            q.suspended = true;
          }
          (*shared_ids)[idx] &= ~KFD_DBG_QUEUE_INVALID_MASK;
          ++per_device;
        }
        if (!per_device) continue;
        Step st;
        st.gpu_id = gpu;
        st.grace_period = s.grace_period;
        st.after = [t, matched, shared_ids, total, per_device, mask = s.exception_mask](int err) {
          for (auto [idx, qid] : *matched) {
            if (err) {
              (*shared_ids)[idx] |= KFD_DBG_QUEUE_ERROR_MASK;
            } else if (Queue* q = t->queue(qid)) {
              q->exception_status &= ~mask;
            }
          }
          if (!err) *total += per_device;
        };
        steps.push_back(std::move(st));
      }
      return run_locked(t, call, std::move(steps),
                        [this, t, c, s, shared_ids, total]() -> std::optional<long> {
                          if (*total > 0) write_wave_state_headers(*t);
                          // The copy back failing is only logged by the kernel.
                          if (!shared_ids->empty())
                            env.write_memory(c.pid, s.queue_array_ptr, shared_ids->data(),
                                             shared_ids->size() * 4);
                          return *total;
                        });
    }

    case KFD_IOC_DBG_TRAP_RESUME_QUEUES: {
      const auto r = a.resume_queues;
      // A NULL array resumes every queue of the target (resume_queues(p, n, NULL)).
      const bool all = r.queue_array_ptr == 0;
      auto ids = std::make_shared<std::vector<uint32_t>>();
      if (!all) {
        ids->resize(r.num_queues);
        if (r.num_queues &&
            !env.read_memory(c.pid, r.queue_array_ptr, ids->data(), ids->size() * 4))
          return Outcome::done(-EFAULT);
        for (auto& id : *ids) id |= KFD_DBG_QUEUE_INVALID_MASK;
      }
      auto total = std::make_shared<long>(0);
      std::vector<Step> steps;
      for (const auto& d : t->devices) {
        const uint32_t gpu = d.gpu_id;
        auto matched = std::make_shared<std::vector<int>>();
        int per_device = 0;
        for (auto& q : t->queues) {
          if (q.gpu_id != gpu) continue;
          int idx = -1;
          if (!all) {
            idx = array_index(*ids, q.id);
            if (idx < 0) continue;
            matched->push_back(idx);
            (*ids)[idx] &= ~KFD_DBG_QUEUE_INVALID_MASK;
          }
          q.suspended = false;  // resume_single_queue(); never fails without MES
          ++per_device;
        }
        if (!per_device) continue;
        Step st;
        st.gpu_id = gpu;
        st.grace_period = KFD_USE_DEFAULT_GRACE_PERIOD;
        st.after = [this, t, matched, ids, total, per_device](int err) {
          if (err) {
            for (int idx : *matched) (*ids)[idx] |= KFD_DBG_QUEUE_ERROR_MASK;
            return;
          }
          wake_destroy_waiters(t);
          *total += per_device;
        };
        steps.push_back(std::move(st));
      }
      return run_locked(
          t, call, std::move(steps), [this, c, r, ids, total]() -> std::optional<long> {
            if (!ids->empty())
              env.write_memory(c.pid, r.queue_array_ptr, ids->data(), ids->size() * 4);
            return *total;
          });
    }

    case KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH: {
      // kfd_dbg_get_dev_watch_id(): the four watch slots belong to the device, shared by every
      // process on it; the id field is INVALID (4) when none is free.
      auto& w = a.set_node_address_watch;
      auto* d = t->device(w.gpu_id);
      uint32_t& in_use = device_watch_ids[w.gpu_id];
      w.id = detail::kAddressWatchSlots;
      for (uint32_t i = 0; i < detail::kAddressWatchSlots; ++i) {
        if (in_use & (1u << i)) continue;
        in_use |= 1u << i;
        d->watch_used[i] = true;
        w.id = i;
        break;
      }
      store_args(call, a);
      return Outcome::done(w.id == detail::kAddressWatchSlots ? -ENOMEM : 0);
    }

    case KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH: {
      auto& w = a.clear_node_address_watch;
      auto* d = t->device(w.gpu_id);
      if (w.id >= detail::kAddressWatchSlots || !d->watch_used[w.id]) return Outcome::done(-EINVAL);
      d->watch_used[w.id] = false;
      device_watch_ids[w.gpu_id] &= ~(1u << w.id);
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_SET_FLAGS: {
      const uint32_t prev = t->trap_flags;
      const uint32_t flags = a.set_flags.flags;
      const uint32_t cap = profile.capability, cap2 = profile.capability2;
      if (((flags & KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP) &&
           !(cap & caps::HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED)) ||
          ((flags & KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP) &&
           !(cap & caps::HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED)) ||
          ((flags & KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE) &&
           !(cap2 & caps::HSA_CAP2_TRAP_DEBUG_LDS_OUT_OF_ADDR_RANGE_SUPPORTED))) {
        a.set_flags.flags = prev;
        store_args(call, a);
        return Outcome::done(-EACCES);
      }
      t->trap_flags = flags;
      a.set_flags.flags = prev;
      store_args(call, a);
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT: {
      auto& e = a.query_debug_event;
      const uint64_t clear = e.exception_mask;
      e.exception_mask = 0;
      e.gpu_id = 0;
      e.queue_id = 0;
      bool found = false;
      for (auto& q : t->queues) {
        if (!(t->exception_enable_mask & q.exception_status)) continue;
        e.exception_mask = q.exception_status;
        e.queue_id = q.id;
        e.gpu_id = q.gpu_id;
        q.exception_status &= ~clear;
        found = true;
        break;
      }
      if (!found)
        for (auto& d : t->devices) {
          if (!(t->exception_enable_mask & d.exception_status)) continue;
          e.exception_mask = d.exception_status;
          e.gpu_id = d.gpu_id;
          d.exception_status &= ~clear;
          found = true;
          break;
        }
      if (!found && (t->exception_enable_mask & t->exception_status)) {
        e.exception_mask = t->exception_status;
        t->exception_status &= ~clear;
      }
      store_args(call, a);
      return Outcome::done(e.exception_mask ? 0 : -EAGAIN);
    }

    case KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO: {
      auto& x = a.query_exception_info;
      const uint32_t ec = x.exception_code;
      if (!x.info_ptr) return Outcome::done(-EINVAL);  // checked first, for every source
      uint64_t* status = nullptr;
      uint32_t actual = 0;
      if (ec_is_queue(ec)) {
        Queue* q = t->queue(x.source_id);
        if (!q) return Outcome::done(-EINVAL);
        if (!(q->exception_status & KFD_EC_MASK(ec))) return Outcome::done(-ENODATA);
        status = &q->exception_status;
      } else if (ec_is_device(ec)) {
        auto* d = t->device(x.source_id);
        if (!d) return Outcome::done(-EINVAL);
        if (!(d->exception_status & KFD_EC_MASK(ec))) return Outcome::done(-ENODATA);
        // No VM-fault record is simulated: EC_DEVICE_MEMORY_VIOLATION carries 0 bytes.
        status = &d->exception_status;
      } else if (ec_is_process(ec)) {
        if (!(t->exception_status & KFD_EC_MASK(ec))) return Outcome::done(-ENODATA);
        if (ec == EC_PROCESS_RUNTIME) {
          kfd_runtime_info ri{t->r_debug, t->runtime_state, t->ttmp_setup};
          const uint32_t n = std::min<uint32_t>(x.info_size, sizeof(ri));
          if (n && !env.write_memory(c.pid, x.info_ptr, &ri, n)) return Outcome::done(-EFAULT);
          actual = sizeof(ri);
        }
        status = &t->exception_status;
      } else {
        return Outcome::done(-EINVAL);
      }
      x.info_size = actual;
      if (x.clear_exception) *status &= ~KFD_EC_MASK(ec);
      store_args(call, a);
      return Outcome::done(0);
    }

    case KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT: {
      auto& s = a.queue_snapshot;
      const uint32_t want = s.num_queues, stride = s.entry_size;
      s.num_queues = 0;
      if (stride == 0) {
        store_args(call, a);
        return Outcome::done(-EINVAL);
      }
      s.entry_size = std::min<uint32_t>(stride, sizeof(kfd_queue_snapshot_entry));
      long r = 0;
      uint64_t buf = s.snapshot_buf_ptr;
      for (auto& q : t->queues) {
        if (s.num_queues < want) {
          kfd_queue_snapshot_entry e{};
          e.exception_status = q.exception_status;
          e.ring_base_address = q.ring_base;
          e.write_pointer_address = q.wptr;
          e.read_pointer_address = q.rptr;
          e.ctx_save_restore_address = q.ctx_save_addr;
          e.queue_id = q.id;
          e.gpu_id = q.gpu_id;
          e.ring_size = q.ring_size;
          // BY_ENG_ID queues are reported as what they are on the engine they got.
          e.queue_type =
              q.uapi_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
                  ? (q.sdma_engine >= profile.num_sdma_engines ? KFD_IOC_QUEUE_TYPE_SDMA_XGMI
                                                               : KFD_IOC_QUEUE_TYPE_SDMA)
                  : q.uapi_type;
          e.ctx_save_restore_area_size = q.ctx_save_size;
          q.exception_status &= ~s.exception_mask;
          if (!env.write_memory(c.pid, buf, &e, s.entry_size)) {
            r = -EFAULT;
            break;
          }
          buf += stride;
        }
        ++s.num_queues;
      }
      store_args(call, a);
      return Outcome::done(r);
    }

    case KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT: {
      auto& s = a.device_snapshot;
      if (!s.snapshot_buf_ptr) return Outcome::done(-EINVAL);
      const uint32_t stride = s.entry_size;
      const uint32_t n = std::min<uint32_t>(s.num_devices, t->devices.size());
      const uint32_t ksize = options.minor_version <= 16
                                 ? static_cast<uint32_t>(KFD_DBG_DEVICE_INFO_ENTRY_SIZE_V116)
                                 : sizeof(kfd_dbg_device_info_entry);
      s.num_devices = static_cast<uint32_t>(t->devices.size());
      s.entry_size = std::min(stride, ksize);
      long r = 0;
      uint64_t buf = s.snapshot_buf_ptr;
      for (uint32_t i = 0; i < n; ++i) {
        auto& d = t->devices[i];
        const GpuInstance* g = nullptr;
        for (const auto& gi : profile.gpus)
          if (gi.gpu_id == d.gpu_id) g = &gi;
        kfd_dbg_device_info_entry e{};
        e.exception_status = d.exception_status;
        const auto ap = detail::gfx9_apertures();
        e.lds_base = ap.lds_base;
        e.lds_limit = ap.lds_limit;
        e.scratch_base = ap.scratch_base;
        e.scratch_limit = ap.scratch_limit;
        e.gpuvm_base = ap.gpuvm_base;
        e.gpuvm_limit = ap.gpuvm_limit;
        e.gpu_id = d.gpu_id;
        e.location_id = g ? g->location_id : 0;
        e.vendor_id = profile.vendor_id;
        e.device_id = profile.device_id;
        e.revision_id = profile.revision_id;
        e.subsystem_vendor_id = profile.subsystem_vendor_id;
        e.subsystem_device_id = profile.subsystem_device_id;
        e.fw_version = profile.fw_version;
        e.gfx_target_version = profile.gfx_target_version;
        e.simd_count = profile.simd_count();
        e.max_waves_per_simd = profile.max_waves_per_simd;
        e.array_count = profile.array_count;
        e.simd_arrays_per_engine = profile.simd_arrays_per_engine;
        e.num_xcc = profile.num_xcc;
        e.capability = profile.capability;
        e.debug_prop = static_cast<uint32_t>(profile.debug_prop);
        e.capability2 = profile.capability2;
        if (!env.write_memory(c.pid, buf, &e, s.entry_size)) {
          r = -EFAULT;
          break;
        }
        buf += stride;
        d.exception_status &= ~s.exception_mask;
      }
      store_args(call, a);
      return Outcome::done(r);
    }

    default:
      return Outcome::done(-EINVAL);  // §7.10 op >= 15
  }
}

}  // namespace gpreempt::sim
