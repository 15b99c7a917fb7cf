// CREATE_QUEUE, DESTROY_QUEUE and UPDATE_QUEUE (docs/kfd-interface.md#create-and-destroy-queue):
// argument checks in the kernel's order, queue ids, SDMA engines, doorbells and MQD addresses, and
// a destroy that waits for its suspended queue to be resumed.
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

}  // namespace

bool detail::Queue::is_sdma() const {
  return uapi_type == KFD_IOC_QUEUE_TYPE_SDMA || uapi_type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI ||
         uapi_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
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
    // wait_event_interruptible with a signal already pending: -ERESTARTSYS at once.
    if (call->signal_pending) return Outcome::done(-EINTR);
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

}  // namespace gpreempt::sim
