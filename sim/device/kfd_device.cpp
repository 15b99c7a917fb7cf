// The simulated KFD: ioctl dispatch, processes, GET_VERSION, queues and RUNTIME_ENABLE
// (docs/kfd-interface.md#ioctl-dispatch to #runtime-enable). DBG_TRAP lives in dbg_trap.cpp, the
// file renderers in render_*.cpp.
#include <gpreempt/kfd_abi.h>

#include <cerrno>
#include <cstring>

#include "device_state.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;
using detail::CallPtr;
using detail::Outcome;
using detail::Process;
using detail::ProcessPtr;
using detail::Queue;

namespace {

// x86_64 access_ok(): the range lies below TASK_SIZE_MAX (47-bit user space minus a guard page).
constexpr uint64_t kTaskSizeMax = (1ull << 47) - 4096;
bool access_ok(uint64_t addr, uint64_t size) {
  return size <= kTaskSizeMax && addr <= kTaskSizeMax - size;
}
bool is_power_of_2(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

// mmap cookie for the doorbell page (kfd_priv.h KFD_MMAP_TYPE_DOORBELL / KFD_MMAP_GPU_ID).
constexpr uint64_t kMmapTypeDoorbell = 0x3ull << 62;
constexpr uint64_t mmap_gpu_id(uint32_t gpu_id) {
  return (static_cast<uint64_t>(gpu_id) << 46) & (((1ull << 16) - 1) << 46);
}
constexpr uint32_t kDoorbellSize = 8;  // SOC15 doorbells are 64-bit
// SDMA doorbells follow the compute ones inside the process doorbell frame (2 pages, 1024 slots).
constexpr uint32_t kSdmaDoorbellBase = 0x100;

using TableEntry = detail::IoctlTableEntry;

template <class T>
T load(const CallPtr& c) {
  T v;
  std::memcpy(&v, c->kbuf.data(), sizeof(T));
  return v;
}
template <class T>
void store(const CallPtr& c, const T& v) {
  std::memcpy(c->kbuf.data(), &v, sizeof(T));
}

}  // namespace

bool detail::Queue::is_sdma() const {
  return uapi_type == KFD_IOC_QUEUE_TYPE_SDMA || uapi_type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI ||
         uapi_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
}

detail::ProcessDevice* detail::Process::device(uint32_t gpu_id) {
  for (auto& d : devices)
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
  for (auto& [pid, p] : state_->processes)
    if (p->event_file) state_->env.release_file(*p->event_file);
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
  for (const auto& g : profile.gpus) p->devices.push_back({g.gpu_id, 0, {}, 0});
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
    return {true, 0};
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
    std::erase(p->mutex_waiters, call);
  }
  // A call waiting for the scheduler finishes its state changes; only the answer is dropped.
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

// ---- CREATE_QUEUE (docs/kfd-interface.md#create-and-destroy-queue) -------------------------

Outcome KfdDevice::State::create_queue(const CallPtr& call) {
  auto a = load<kfd_ioctl_create_queue_args>(call);
  const uint32_t minor = options.minor_version;
  if (minor < 17) a.sdma_engine_id = 0;      // not part of a <= 1.16 kernel's struct
  if (minor < 22) a.metadata_ring_size = 0;  // `pad` before 1.22

  // set_queue_properties_from_user(), in its order.
  if ((a.queue_percentage & 0xff) > KFD_MAX_QUEUE_PERCENTAGE) return Outcome::done(-EINVAL);
  if (a.queue_priority > KFD_MAX_QUEUE_PRIORITY) return Outcome::done(-EINVAL);
  if (a.ring_base_address && !access_ok(a.ring_base_address, sizeof(uint64_t)))
    return Outcome::done(-EFAULT);
  if (!is_power_of_2(a.ring_size) && a.ring_size != 0) return Outcome::done(-EINVAL);
  if (minor >= 22 && a.ring_size < KFD_MIN_QUEUE_RING_SIZE) {
    a.ring_size = KFD_MIN_QUEUE_RING_SIZE;  // written back: args are copied out
    store(call, a);
  }
  if (minor >= 22 && a.metadata_ring_size != 0 && !is_power_of_2(a.metadata_ring_size))
    return Outcome::done(-EINVAL);
  if (!access_ok(a.read_pointer_address, sizeof(uint32_t))) return Outcome::done(-EFAULT);
  if (!access_ok(a.write_pointer_address, sizeof(uint32_t))) return Outcome::done(-EFAULT);
  if (a.eop_buffer_address && !access_ok(a.eop_buffer_address, sizeof(uint32_t)))
    return Outcome::done(-EFAULT);
  if (a.ctx_save_restore_address && !access_ok(a.ctx_save_restore_address, sizeof(uint32_t)))
    return Outcome::done(-EFAULT);
  switch (a.queue_type) {
    case KFD_IOC_QUEUE_TYPE_COMPUTE:
    case KFD_IOC_QUEUE_TYPE_SDMA:
    case KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
    case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
      break;
    case KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
      if (minor >= 17) break;
      [[fallthrough]];
    default:
      return Outcome::done(-detail::kENOTSUPP);
  }

  ProcessPtr p = find_process(call->caller.pid);
  if (!p) return Outcome::done(-EINVAL);
  if (!lock_or_queue(*p, call)) return Outcome::parked();
  auto* pdd = p->device(a.gpu_id);
  if (!pdd) return Outcome::done(-EINVAL);
  const uint32_t n_sdma = profile.num_sdma_engines;
  const uint32_t n_xgmi = profile.num_sdma_xgmi_engines;
  if (a.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID && a.sdma_engine_id > n_sdma + n_xgmi - 1)
    return Outcome::done(-EINVAL);

  // pqm_create_queue()
  if (pdd->queue_count >= profile.per_process_queue_cap) return Outcome::done(-ENOSPC);
  uint32_t qid = 0;
  while (qid < detail::kMaxQueuesPerProcessBitmap && p->queue_ids.test(qid)) ++qid;
  if (qid == detail::kMaxQueuesPerProcessBitmap) return Outcome::done(-ENOMEM);

  Queue q;
  q.uapi_type = a.queue_type;
  const bool compute = !q.is_sdma();
  uint32_t& dev_total = device_queue_count[a.gpu_id];
  if (dev_total >= detail::kMaxQueuesPerDevice) return Outcome::done(-EPERM);
  if (compute && options.sched_policy == 1) {
    uint32_t procs = 0, active = 0;
    for (const auto& [pid, other] : processes) {
      bool uses = false;
      for (const auto& oq : other->queues)
        if (oq.gpu_id == a.gpu_id) {
          uses = true;
          if (oq.active()) ++active;
        }
      procs += uses;
    }
    if (procs >= detail::kVmidsForKfd || active >= profile.num_cp_queues)
      return Outcome::done(-EPERM);
  }
  if (!compute) {
    // allocate_sdma_queue(): lowest free slot, engines interleaved (sdma_id % engines).
    auto& used = sdma_used[a.gpu_id];
    const uint32_t qpe = profile.num_sdma_queues_per_engine;
    bool found = false;
    auto take = [&](uint32_t engine, uint32_t queue) {
      used[engine * qpe + queue] = true;
      q.sdma_engine = engine;
      q.sdma_queue = queue;
      found = true;
    };
    if (a.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID) {
      for (uint32_t s = 0; s < qpe && !found; ++s)
        if (!used[a.sdma_engine_id * qpe + s]) take(a.sdma_engine_id, s);
    } else {
      const bool xgmi = a.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI && n_xgmi > 0;
      const uint32_t base = xgmi ? n_sdma : 0, count = xgmi ? n_xgmi : n_sdma;
      for (uint32_t id = 0; id < count * qpe && !found; ++id) {
        uint32_t engine = base + id % count, s = id / count;
        if (!used[engine * qpe + s]) take(engine, s);
      }
    }
    if (!found) return Outcome::done(-ENOMEM);
  }

  q.id = qid;
  q.gpu_id = a.gpu_id;
  q.ring_base = a.ring_base_address;
  q.ring_size = a.ring_size;
  q.rptr = a.read_pointer_address;
  q.wptr = a.write_pointer_address;
  q.eop_addr = a.eop_buffer_address;
  q.eop_size = a.eop_buffer_size;
  q.ctx_save_addr = a.ctx_save_restore_address;
  q.ctx_save_size = a.ctx_save_restore_size;
  q.ctl_stack_size = a.ctl_stack_size;
  q.percentage = a.queue_percentage;
  q.priority = a.queue_priority;
  q.doorbell_id = compute ? qid
                          : kSdmaDoorbellBase + q.sdma_engine * profile.num_sdma_queues_per_engine +
                                q.sdma_queue;
  q.doorbell_offset =
      kMmapTypeDoorbell | mmap_gpu_id(a.gpu_id) | (uint64_t{q.doorbell_id} * kDoorbellSize);
  // One MQD per XCC for compute queues at the profile's per-XCC stride; SDMA MQDs take a page.
  q.mqd_gpu_addr = next_mqd_addr;
  next_mqd_addr += compute ? uint64_t{profile.mqd_stride_per_xcc} * profile.num_xcc : 4096;
  q.exception_status = KFD_EC_MASK(EC_QUEUE_NEW);
  if (compute) {
    // Each new compute queue's XCC copies start one logical XCC lower (realdata 03: queues 0..4
    // of a process have logical ids 0,3,2,1,0 on physical XCC 0).
    const uint32_t k = compute_queues_created[a.gpu_id]++;
    q.logical_xcc_start = (profile.num_xcc - k % profile.num_xcc) % profile.num_xcc;
  }

  p->queue_ids.set(qid);
  if (pdd->queue_count == 0) pdd->registered_seq = next_register_seq++;  // register_process()
  ++pdd->queue_count;
  ++dev_total;
  p->queues.push_front(q);  // newest first (list_add in pqm_create_queue)
  hws->queue_created(view(*p, p->queues.front()));
  if (p->exception_enable_mask & KFD_EC_MASK(EC_QUEUE_NEW)) signal(*p);

  a.queue_id = qid;
  a.doorbell_offset = q.doorbell_offset;
  store(call, a);
  return Outcome::done(0);
}

// ---- DESTROY_QUEUE (docs/kfd-interface.md#create-and-destroy-queue) ------------------------

void KfdDevice::State::remove_queue(Process& p, std::list<Queue>::iterator it) {
  const Queue q = *it;
  if (q.is_sdma()) {
    auto& used = sdma_used[q.gpu_id];
    used[q.sdma_engine * profile.num_sdma_queues_per_engine + q.sdma_queue] = false;
  }
  if (auto* d = p.device(q.gpu_id)) --d->queue_count;
  --device_queue_count[q.gpu_id];
  p.queue_ids.reset(q.id);
  p.queues.erase(it);
  hws->queue_destroyed(p.pid, q.id, q.gpu_id);
}

Outcome KfdDevice::State::destroy_queue(const CallPtr& call) {
  auto a = load<kfd_ioctl_destroy_queue_args>(call);
  ProcessPtr p = find_process(call->caller.pid);
  if (!p) return Outcome::done(-EINVAL);
  if (!lock_or_queue(*p, call)) return Outcome::parked();
  auto it = std::find_if(p->queues.begin(), p->queues.end(),
                         [&](const Queue& q) { return q.id == a.queue_id; });
  if (it == p->queues.end()) return Outcome::done(-EINVAL);
  // wait_on_destroy_queue(): marked first, so suspend reports it INVALID from now on.
  it->being_destroyed = true;
  if (p->debug_trap_enabled && it->suspended) {
    p->destroy_waiters.emplace_back(a.queue_id, call);
    return Outcome::parked();
  }
  const uint32_t gpu = it->gpu_id;
  remove_queue(*p, it);
  raise(*p, KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE), gpu, 0);
  return Outcome::done(0);
}

void KfdDevice::State::wake_destroy_waiters(const ProcessPtr& p) {
  // wake_up_all(destroy_wait): each waiter re-checks its queue; woken ones retake the mutex.
  std::vector<std::pair<uint32_t, CallPtr>> still;
  for (auto& [qid, call] : p->destroy_waiters) {
    const Queue* q = p->queue(qid);
    if (q && q->suspended)
      still.emplace_back(qid, call);
    else
      p->mutex_waiters.push_back(call);
  }
  p->destroy_waiters = std::move(still);
}

// ---- UPDATE_QUEUE -----------------------------------------------------------------------------

Outcome KfdDevice::State::update_queue(const CallPtr& call) {
  auto a = load<kfd_ioctl_update_queue_args>(call);
  if ((a.queue_percentage & 0xff) > KFD_MAX_QUEUE_PERCENTAGE) return Outcome::done(-EINVAL);
  if (a.queue_priority > KFD_MAX_QUEUE_PRIORITY) return Outcome::done(-EINVAL);
  if (a.ring_base_address && !access_ok(a.ring_base_address, sizeof(uint64_t)))
    return Outcome::done(-EFAULT);
  if (!is_power_of_2(a.ring_size) && a.ring_size != 0) return Outcome::done(-EINVAL);
  if (options.minor_version >= 22 && a.ring_size < KFD_MIN_QUEUE_RING_SIZE)
    a.ring_size = KFD_MIN_QUEUE_RING_SIZE;
  ProcessPtr p = find_process(call->caller.pid);
  if (!p) return Outcome::done(-EINVAL);
  if (!lock_or_queue(*p, call)) return Outcome::parked();
  Queue* q = p->queue(a.queue_id);
  if (!q) return Outcome::done(-EFAULT);  // pqm_update_queue_properties: no such queue
  q->ring_base = a.ring_base_address;
  q->ring_size = a.ring_size;
  q->percentage = a.queue_percentage;
  q->priority = a.queue_priority;
  hws->queue_updated(view(*p, *q));
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
