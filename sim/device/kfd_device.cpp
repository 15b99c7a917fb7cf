// The simulated KFD's core: ioctl dispatch, processes, calls the kernel would block (the process
// mutex, runlist chains), exceptions, GET_VERSION, RUNTIME_ENABLE and process exit. The queue
// ioctls live in queue_ioctls.cpp, DBG_TRAP in dbg_trap*.cpp, the file renderers in render_*.cpp.
#include <gpreempt/kfd_abi.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

using TableEntry = detail::IoctlTableEntry;

detail::ProcessDevice* detail::Process::device(uint32_t gpu_id) {
  for (auto& d : devices)
    if (d.gpu_id == gpu_id) return &d;
  return nullptr;
}

const detail::ProcessDevice* detail::Process::device(uint32_t gpu_id) const {
  for (const auto& d : devices)
    if (d.gpu_id == gpu_id) return &d;
  return nullptr;
}

detail::Queue* detail::Process::queue(uint32_t id) {
  for (auto& q : queues)
    if (q.id == id) return &q;
  return nullptr;
}

KfdDevice::State::State(KfdDevice& s, const DeviceProfile& prof, DeviceOptions opts, HostEnv& e,
                        std::shared_ptr<Hws> h)
    : self(s), profile(prof), options(opts), env(e), hws(std::move(h)) {
  if (!hws) hws = std::make_shared<InstantHws>();
  next_mqd_addr = profile.first_mqd_addr;
  for (const auto& g : profile.gpus) {
    sdma_used[g.gpu_id].assign((profile.num_sdma_engines + profile.num_sdma_xgmi_engines) *
                                   profile.num_sdma_queues_per_engine,
                               false);
    device_queue_count[g.gpu_id] = 0;
  }
}

KfdDevice::KfdDevice(const DeviceProfile& profile, DeviceOptions options, HostEnv& env,
                     std::shared_ptr<Hws> hws)
    : state_(std::make_unique<State>(*this, profile, options, env, std::move(hws))) {}

KfdDevice::~KfdDevice() {
  auto guard = state_->guard;
  std::lock_guard lock(guard->mutex);
  guard->alive = false;
  for (auto& [pid, p] : state_->processes) {
    if (p->event_file) state_->env.release_file(*p->event_file);
    for (auto& d : p->devices)
      if (d.drm_file) state_->env.release_file(*d.drm_file);
  }
}

const DeviceProfile& KfdDevice::profile() const {
  return state_->profile;
}

ProcessPtr KfdDevice::State::find_process(int pid) const {
  auto it = processes.find(pid);
  return it == processes.end() ? nullptr : it->second;
}

ProcessPtr KfdDevice::State::create_process(int pid) {
  if (profile.gpus.empty()) return nullptr;  // kernel: -EINVAL, no GPU node
  auto p = std::make_shared<Process>();
  p->pid = pid;
  // amdgpu_pasid_alloc(16 bits) hands out the lowest free id of [0x8000, 0xffff] first.
  for (uint32_t pasid = 0x8000;; ++pasid) {
    bool used = false;
    for (const auto& [opid, o] : processes) used |= o->pasid == pasid;
    if (!used) {
      p->pasid = pasid;
      break;
    }
  }
  for (uint32_t slot = 0;; ++slot) {
    bool used = false;
    for (const auto& [opid, o] : processes) used |= o->doorbell_slot == slot;
    if (!used) {
      p->doorbell_slot = slot;
      break;
    }
  }
  for (const auto& g : profile.gpus) {
    detail::ProcessDevice d;
    d.gpu_id = g.gpu_id;
    p->devices.push_back(std::move(d));
  }
  processes[pid] = p;
  return p;
}

int KfdDevice::open(const Caller& caller) {
  std::lock_guard lock(state_->guard->mutex);
  if (state_->find_process(caller.pid)) return 0;
  return state_->create_process(caller.pid) ? 0 : -EINVAL;
}

std::vector<QueueView> KfdDevice::queues() const {
  std::lock_guard lock(state_->guard->mutex);
  std::vector<QueueView> out;
  for (const auto& [pid, p] : state_->processes)
    for (const auto& q : p->queues) out.push_back(state_->view(*p, q));
  return out;
}

std::map<std::string, std::string> KfdDevice::render_files() const {
  std::lock_guard lock(state_->guard->mutex);
  return state_->render();
}

std::map<std::string, std::string> KfdDevice::render_files(FilePart part, int pid) const {
  std::lock_guard lock(state_->guard->mutex);
  return state_->render_part(part, pid);
}

QueueView KfdDevice::State::view(const Process& p, const Queue& q) const {
  QueueView v;
  v.pid = p.pid;
  v.queue_id = q.id;
  v.gpu_id = q.gpu_id;
  v.uapi_type = q.uapi_type;
  v.ring_base = q.ring_base;
  v.ring_size = q.ring_size;
  v.read_pointer_address = q.rptr;
  v.write_pointer_address = q.wptr;
  v.priority = q.priority;
  v.suspended = q.suspended;
  v.doorbell_offset = q.doorbell_offset;
  v.doorbell_id = q.doorbell_id;
  v.ctx_save_restore_address = q.ctx_save_addr;
  v.ctx_save_restore_size = q.ctx_save_size;
  v.percentage = q.percentage & 0xff;
  v.active = q.active();
  return v;
}

std::vector<QueueView> KfdDevice::State::runnable(uint32_t gpu_id) const {
  std::vector<QueueView> out;
  for (const auto& [pid, p] : processes)
    for (const auto& q : p->queues)
      if (q.gpu_id == gpu_id && q.active()) out.push_back(view(*p, q));
  return out;
}

// ---- calls: dispatch, completion, cancellation
// ---------------------------------------------------

IoctlResult KfdDevice::ioctl(const Caller& caller, unsigned long request, std::span<uint8_t> args,
                             CallToken token) {
  std::lock_guard lock(state_->guard->mutex);
  const uint32_t nr = ioc_nr(request);
  const uint32_t minor = state_->options.minor_version;

  // docs/kfd-interface.md#ioctl-dispatch: only _IOC_NR selects the handler; outside the table ->
  // ENOTTY. The table grows with the version: the debugger API (0x25/0x26) from 1.13,
  // CREATE_PROCESS (0x27) from 1.19.
  const uint32_t end = minor >= 19   ? AMDKFD_COMMAND_END
                       : minor >= 13 ? AMDKFD_COMMAND_END_V116
                                     : NR_RUNTIME_ENABLE;
  if (nr < AMDKFD_COMMAND_START || nr >= end) return {false, -ENOTTY};

  TableEntry e{};
  switch (nr) {
    case NR_GET_VERSION:
      e = {sizeof(kfd_ioctl_get_version_args), false, true};
      break;
    case NR_CREATE_QUEUE:
      e = {minor >= 17 ? sizeof(kfd_ioctl_create_queue_args) : KFD_CREATE_QUEUE_ARGS_SIZE_V116,
           true, true};
      break;
    case NR_DESTROY_QUEUE:
      e = {sizeof(kfd_ioctl_destroy_queue_args), true, true};
      break;
    case NR_UPDATE_QUEUE:
      e = {sizeof(kfd_ioctl_update_queue_args), true, false};
      break;
    case NR_RUNTIME_ENABLE:
      e = {sizeof(kfd_ioctl_runtime_enable_args), true, true};
      break;
    case NR_DBG_TRAP:
      e = {sizeof(kfd_ioctl_dbg_trap_args), true, true};
      break;
    default:
      if (auto legacy = detail::legacy_ioctl_entry(nr)) {
        e = {legacy->ksize, legacy->in, legacy->out};
        break;
      }
      // In the kernel's table but not simulated (memory management, events, SVM, ...): an error,
      // never a silent success, so a client that needs it fails visibly.
      return {false, -ENOTTY};
  }

  auto call = std::make_shared<detail::Call>();
  call->caller = caller;
  call->nr = nr;
  call->usize = args.size();
  call->copy_out = e.out;
  call->token = token;
  call->has_token = true;
  // max(usize, ksize), and never less than our struct so handlers can load it whole; the bytes
  // beyond the caller's size stay zero as in the kernel.
  call->kbuf.assign(std::max({args.size(), e.ksize, std::size_t{128}}), 0);
  // A size-0 call may come with a null span: memcpy from or to null is undefined even for 0 bytes.
  if (e.in && !args.empty()) std::memcpy(call->kbuf.data(), args.data(), args.size());

  Outcome o = state_->dispatch(call);
  if (o.blocked) {
    state_->pending[token] = call;
    return {true, 0, o.timeout_ms};
  }
  if (e.out && !args.empty()) std::memcpy(args.data(), call->kbuf.data(), args.size());
  return {false, o.ret};
}

Outcome KfdDevice::State::dispatch(const CallPtr& call) {
  switch (call->nr) {
    case NR_GET_VERSION:
      return get_version(call);
    case NR_CREATE_QUEUE:
      return create_queue(call);
    case NR_DESTROY_QUEUE:
      return destroy_queue(call);
    case NR_UPDATE_QUEUE:
      return update_queue(call);
    case NR_RUNTIME_ENABLE:
      return runtime_enable(call);
    case NR_DBG_TRAP:
      return dbg_trap(call);
  }
  return legacy_ioctl(call);
}

void KfdDevice::State::complete(const CallPtr& call, long ret) {
  if (!call || !call->has_token) return;
  pending.erase(call->token);
  if (call->cancelled) return;
  call->cancelled = true;  // complete at most once
  std::vector<uint8_t> out;
  if (call->copy_out) out.assign(call->kbuf.begin(), call->kbuf.begin() + call->usize);
  if (self.on_complete) self.on_complete(call->token, ret, std::move(out));
}

void KfdDevice::cancel(CallToken token) {
  std::lock_guard lock(state_->guard->mutex);
  auto it = state_->pending.find(token);
  if (it == state_->pending.end()) return;
  CallPtr call = it->second;
  state_->pending.erase(it);
  call->cancelled = true;
  for (auto& [pid, p] : state_->processes) {
    if (p->runtime_waiter == call) {
      // down_interruptible() interrupted: the next RUNTIME_ENABLE resumes waiting
      // (docs/kfd-interface.md#runtime-enable).
      p->runtime_waiter.reset();
      p->runtime_retry = true;
    }
    std::erase_if(p->destroy_waiters, [&](const auto& w) { return w.second == call; });
    std::erase_if(p->event_waits, [&](const auto& w) { return w.call == call; });
    std::erase(p->mutex_waiters, call);
  }
  // A call waiting for the scheduler finishes its state changes; only the answer is dropped.
}

bool KfdDevice::interrupt(CallToken token, uint64_t slept_since_ns, uint64_t now_ns) {
  std::lock_guard lock(state_->guard->mutex);
  auto& st = *state_;
  if (st.interrupt_event_wait(token, slept_since_ns, now_ns)) return true;
  auto it = st.pending.find(token);
  if (it == st.pending.end()) return false;
  CallPtr call = it->second;
  for (auto& [pid, p] : st.processes) {
    if (p->runtime_waiter == call) {
      // down_interruptible(&runtime_enable_sema) gives -EINTR, which no SA_RESTART restarts; the
      // next RUNTIME_ENABLE resumes waiting (docs/kfd-interface.md#runtime-enable).
      p->runtime_waiter.reset();
      p->runtime_retry = true;
      st.complete(call, -EINTR);
      return true;
    }
    auto d = std::find_if(p->destroy_waiters.begin(), p->destroy_waiters.end(),
                          [&](const auto& w) { return w.second == call; });
    if (d != p->destroy_waiters.end()) {
      // wait_on_destroy_queue's wait_event_interruptible: -ERESTARTSYS, the queue stays marked
      // as being destroyed.
      p->destroy_waiters.erase(d);
      st.complete(call, -EINTR);
      return true;
    }
  }
  // mutex_lock(&p->mutex), dqm_lock and the unmap's fence wait do not look at signals: the call
  // goes on, and the signal waits for an interruptible sleep.
  call->signal_pending = true;
  return false;
}

bool KfdDevice::State::lock_or_queue(Process& p, const CallPtr& call) {
  if (!p.busy) return true;
  p.mutex_waiters.push_back(call);
  return false;
}

void KfdDevice::State::release(const ProcessPtr& p) {
  p->busy = false;
  while (!p->busy && !p->mutex_waiters.empty()) {
    CallPtr c = p->mutex_waiters.front();
    p->mutex_waiters.pop_front();
    if (c->cancelled) continue;
    Outcome o = dispatch(c);
    if (!o.blocked) complete(c, o.ret);
  }
}

// ---- runlist chains ---------------------------------------------------------------------------

void KfdDevice::State::advance(const std::shared_ptr<Chain>& chain) {
  while (chain->next < chain->steps.size()) {
    Step& s = chain->steps[chain->next];
    if (s.skip && s.skip()) {
      ++chain->next;
      continue;
    }
    if (s.no_runlist) {
      if (s.before) s.before();
      std::vector<Step> more;
      if (s.expand) more = s.expand();
      ++chain->next;
      chain->steps.insert(chain->steps.begin() + static_cast<std::ptrdiff_t>(chain->next),
                          std::make_move_iterator(more.begin()),
                          std::make_move_iterator(more.end()));
      continue;
    }
    if (s.before) s.before();
    struct Box {
      bool in_call = true;
      bool done = false;
      bool consumed = false;
      int err = 0;
    };
    auto box = std::make_shared<Box>();
    std::weak_ptr<detail::Guard> weak = guard;
    hws->execute_runlist(s.gpu_id, s.grace_period, runnable(s.gpu_id),
                         [this, weak, chain, box](int err) {
                           auto g = weak.lock();
                           if (!g) return;
                           std::lock_guard lock(g->mutex);
                           if (!g->alive || box->consumed) return;
                           if (box->in_call) {
                             box->done = true;
                             box->err = err;
                             return;
                           }
                           box->consumed = true;
                           auto after = chain->steps[chain->next].after;
                           ++chain->next;
                           if (after) after(err);
                           advance(chain);
                         });
    box->in_call = false;
    if (!box->done) return;  // continues from the scheduler's callback
    box->consumed = true;
    auto after = s.after;
    ++chain->next;
    if (after) after(box->err);
  }
  if (chain->finish) {
    auto finish = std::move(chain->finish);
    chain->finish = nullptr;
    finish();
  }
}

// The kernel holds p->mutex and dqm_lock (mutex_lock) and waits for each remap in
// amdkfd_fence_wait_timeout, a loop that ends only at the fence or the timeout: nothing here is
// interruptible, so KfdDevice::interrupt leaves a call parked on a chain alone.
Outcome KfdDevice::State::run_locked(const ProcessPtr& p, const CallPtr& call,
                                     std::vector<Step> steps,
                                     std::function<std::optional<long>()> finish) {
  struct Sync {
    bool returned = false;
    bool finished = false;
    std::optional<long> ret;
  };
  auto sync = std::make_shared<Sync>();
  p->busy = true;
  auto chain = std::make_shared<Chain>();
  chain->steps = std::move(steps);
  chain->finish = [this, p, call, sync, finish = std::move(finish)] {
    std::optional<long> r = finish();
    if (!sync->returned) {
      sync->finished = true;
      sync->ret = r;
    } else if (r) {
      complete(call, *r);
    }
    release(p);
  };
  advance(chain);
  sync->returned = true;
  if (sync->finished && sync->ret) return Outcome::done(*sync->ret);
  return Outcome::parked();
}

// ---- exceptions ------------------------------------------------------------------------------

void KfdDevice::State::signal(Process& p) {
  if (p.event_file) env.signal_file(*p.event_file);
}

void KfdDevice::State::raise(Process& p, uint64_t mask, uint32_t gpu_id, uint32_t queue_id) {
  if (mask & KFD_EC_MASK_DEVICE) {
    if (auto* d = p.device(gpu_id)) d->exception_status |= mask & KFD_EC_MASK_DEVICE;
  } else if (mask & KFD_EC_MASK_PROCESS) {
    p.exception_status |= mask & KFD_EC_MASK_PROCESS;
  } else {
    for (auto& q : p.queues)
      if (q.gpu_id == gpu_id && q.id == queue_id) {
        q.exception_status |= mask;
        break;
      }
  }
  if (p.exception_enable_mask & mask) signal(p);
}

// ---- GET_VERSION (docs/kfd-interface.md#get-version) ---------------------------------------

Outcome KfdDevice::State::get_version(const CallPtr& call) {
  kfd_ioctl_get_version_args a{KFD_IOCTL_MAJOR_VERSION, options.minor_version};
  store(call, a);
  return Outcome::done(0);
}

// ---- RUNTIME_ENABLE (docs/kfd-interface.md#runtime-enable) ----------------------------------

Outcome KfdDevice::State::runtime_enable(const CallPtr& call) {
  auto a = load<kfd_ioctl_runtime_enable_args>(call);
  ProcessPtr p = find_process(call->caller.pid);
  if (!p) return Outcome::done(-EINVAL);
  if (!lock_or_queue(*p, call)) return Outcome::parked();

  // Waiting for the debugger's SEND_RUNTIME_EVENT(EC_PROCESS_RUNTIME): a counting semaphore.
  auto wait_for_debugger = [this, p, call]() -> std::optional<long> {
    if (p->runtime_sema > 0) {
      --p->runtime_sema;
      p->runtime_retry = false;
      return 0;
    }
    if (call->signal_pending) {  // taken while it waited for the mutex or the runlist
      p->runtime_retry = true;
      return -EINTR;
    }
    p->runtime_waiter = call;
    return std::nullopt;
  };

  if (a.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK) {
    if (!p->runtime_retry) {
      if (p->runtime_state != DEBUG_RUNTIME_STATE_DISABLED) return Outcome::done(-EBUSY);
      for (const auto& d : p->devices)
        if (d.queue_count) return Outcome::done(-EEXIST);
      p->runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
      p->r_debug = a.r_debug;
      p->ttmp_setup = (a.mode_mask & KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK) ? 1 : 0;
    }
    if (!p->debug_trap_enabled) return Outcome::done(0);
    if (p->runtime_retry) {
      auto r = wait_for_debugger();
      return r ? Outcome::done(*r) : Outcome::parked();
    }
    // kfd_dbg_trap_activate(), then tell the debugger and wait for its answer.
    return run_locked(p, call, activate_steps(p), [this, p, wait_for_debugger] {
      raise(*p, KFD_EC_MASK(EC_PROCESS_RUNTIME), 0, 0);
      return wait_for_debugger();
    });
  }

  const bool was_enabled = p->runtime_state == DEBUG_RUNTIME_STATE_ENABLED;
  p->runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
  p->r_debug = 0;
  if (!p->debug_trap_enabled) {
    p->ttmp_setup = 0;
    return Outcome::done(0);
  }
  const bool retry = p->runtime_retry;
  return run_locked(p, call, was_enabled ? deactivate_steps(p) : std::vector<Step>{},
                    [this, p, retry, wait_for_debugger]() -> std::optional<long> {
                      if (!retry) raise(*p, KFD_EC_MASK(EC_PROCESS_RUNTIME), 0, 0);
                      auto r = wait_for_debugger();
                      if (r) p->ttmp_setup = 0;
                      return r;
                    });
}

// ---- process lifetime (docs/kfd-interface.md#session-lifetime)
// -------------------------------------------------------------

void KfdDevice::process_exited(int pid) {
  std::lock_guard lock(state_->guard->mutex);
  auto& st = *state_;
  // Blocked calls of its threads vanish with them.
  for (auto it = st.pending.begin(); it != st.pending.end();) {
    if (it->second->caller.pid == pid) {
      it->second->cancelled = true;
      it = st.pending.erase(it);
    } else {
      ++it;
    }
  }
  // Its debug sessions on others end (kfd_process_notifier_release -> kfd_dbg_trap_disable).
  st.debugger_exited(pid);

  ProcessPtr p = st.find_process(pid);
  if (!p) return;
  st.processes.erase(pid);
  p->alive = false;
  if (p->debug_trap_enabled) {
    if (p->debugger_pid)
      if (auto dbg = st.find_process(p->debugger_pid)) --dbg->debugged_process_count;
    if (p->event_file) st.env.release_file(*p->event_file);
    p->event_file.reset();
    p->debug_trap_enabled = false;
  }
  st.clear_address_watches(*p);
  for (auto& d : p->devices) {  // the process devices' VMs drop their DRM files
    if (d.drm_file) st.env.release_file(*d.drm_file);
    d.drm_file.reset();
  }
  while (!p->queues.empty()) st.remove_queue(*p, p->queues.begin());
  p->destroy_waiters.clear();
  p->runtime_waiter.reset();
  // Debuggers queued on its mutex now find it gone (-ESRCH); its own threads' calls were dropped.
  auto waiters = std::move(p->mutex_waiters);
  p->mutex_waiters.clear();
  for (auto& c : waiters) {
    if (c->cancelled) continue;
    detail::Outcome o = st.dispatch(c);
    if (!o.blocked) st.complete(c, o.ret);
  }
}

}  // namespace gpreempt::sim
