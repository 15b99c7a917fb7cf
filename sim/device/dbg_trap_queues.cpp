// DBG_TRAP SUSPEND_QUEUES and RESUME_QUEUES (docs/kfd-interface.md#suspend-queues): which queues
// an id array names, one runlist remap per device, the INVALID/ERROR bits written back, and the
// context-save-area headers a suspend leaves.
#include <gpreempt/kfd_abi.h>

#include <cerrno>

#include "device_state.h"

namespace gpreempt::sim {

using namespace gpreempt::kfd;
using detail::CallPtr;
using detail::Outcome;
using detail::Process;
using detail::ProcessPtr;
using detail::Queue;

namespace {

// q_array_get_index(): first entry whose id (bit 31 ignored) names the queue.
int array_index(const std::vector<uint32_t>& ids, uint32_t queue_id) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    if ((ids[i] & ~KFD_DBG_QUEUE_INVALID_MASK) == queue_id) return static_cast<int>(i);
  return -1;
}

}  // namespace

Outcome KfdDevice::State::dbg_suspend_queues(const CallPtr& call, const ProcessPtr& t,
                                             kfd_ioctl_dbg_trap_args& a) {
  const Caller& c = call->caller;
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

Outcome KfdDevice::State::dbg_resume_queues(const CallPtr& call, const ProcessPtr& t,
                                            kfd_ioctl_dbg_trap_args& a) {
  const Caller& c = call->caller;
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

}  // namespace gpreempt::sim
