// AMDKFD_IOC_DBG_TRAP: the common prologue and the dispatch to each op, and the debug session's
// life: activation, ENABLE, DISABLE, the runtime handshake and the debugger's exit
// (docs/kfd-interface.md#debug-trap-prologue, #enable-and-disable, #session-lifetime).
#include <gpreempt/kfd_abi.h>

#include <algorithm>
#include <cerrno>

#include "device_state.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;
using detail::CallPtr;
using detail::load;
using detail::Outcome;
using detail::Process;
using detail::ProcessPtr;
using detail::Queue;
using detail::store;

namespace {

bool is_hw_op(uint32_t op) {
  return op >= KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE && op <= KFD_IOC_DBG_TRAP_SET_FLAGS;
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
    store(call, a);
    dispatch(call);  // nobody waits for the answer
    if (dbg->debugged_process_count <= 0) break;
  }
}

// ---- the ioctl ---------------------------------------------------------------------------------

Outcome KfdDevice::State::dbg_trap(const CallPtr& call) {
  auto a = load<kfd_ioctl_dbg_trap_args>(call);
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
    case KFD_IOC_DBG_TRAP_ENABLE:
      return dbg_enable(call, t, a);
    case KFD_IOC_DBG_TRAP_DISABLE:
      return dbg_disable(call, t, a);
    case KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT:
      return dbg_send_runtime_event(call, t, a);
    case KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED:
      return dbg_set_exceptions_enabled(call, t, a);
    case KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE:
      return dbg_set_wave_launch_override(call, t, a);
    case KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE:
      return dbg_set_wave_launch_mode(call, t, a);
    case KFD_IOC_DBG_TRAP_SUSPEND_QUEUES:
      return dbg_suspend_queues(call, t, a);
    case KFD_IOC_DBG_TRAP_RESUME_QUEUES:
      return dbg_resume_queues(call, t, a);
    case KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH:
      return dbg_set_address_watch(call, t, a);
    case KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH:
      return dbg_clear_address_watch(call, t, a);
    case KFD_IOC_DBG_TRAP_SET_FLAGS:
      return dbg_set_flags(call, t, a);
    case KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT:
      return dbg_query_debug_event(call, t, a);
    case KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO:
      return dbg_query_exception_info(call, t, a);
    case KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT:
      return dbg_queue_snapshot(call, t, a);
    case KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT:
      return dbg_device_snapshot(call, t, a);
    default:
      return Outcome::done(-EINVAL);  // §7.10 op >= 15
  }
}

// ---- the session: enable, disable, the runtime handshake ---------------------------------------

Outcome KfdDevice::State::dbg_enable(const CallPtr& call, const ProcessPtr& t,
                                     kfd_ioctl_dbg_trap_args& a) {
  const Caller& c = call->caller;
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
    store(call, out);
    if (*efault) return -EFAULT;
    t->exception_enable_mask = a.enable.exception_mask;
    return 0;
  });
}

Outcome KfdDevice::State::dbg_disable(const CallPtr& call, const ProcessPtr& t,
                                      kfd_ioctl_dbg_trap_args&) {
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

Outcome KfdDevice::State::dbg_send_runtime_event(const CallPtr&, const ProcessPtr& t,
                                                 kfd_ioctl_dbg_trap_args& a) {
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

}  // namespace gpreempt::sim
