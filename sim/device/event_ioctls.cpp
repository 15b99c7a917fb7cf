// KFD events (docs/kfd-interface.md#events): CREATE_EVENT (which also takes the event page on a
// dGPU, or allocates one when the process gave none), DESTROY_EVENT, SET_EVENT, RESET_EVENT,
// WAIT_EVENTS and the mmap of the kernel's event page. The GPU signals an event by writing
// its slot of the event page and raising an interrupt: the GPU model's interrupt reaches
// KfdDevice::event_interrupt through the daemon, and a wait also takes slots written before it
// began. A wait that cannot be satisfied at once sleeps (parked) until a set, an interrupt, its
// timeout (told by the transport, which keeps the time) or a signal (KfdDevice::interrupt).
#include <linux/kfd_ioctl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <utility>

#include "device_state.h"
#include "kernel_timer.h"

namespace gpreempt::sim {

using detail::CallPtr;
using detail::Event;
using detail::load;
using detail::Outcome;
using detail::ProcessPtr;
using detail::store;

namespace {

// The request numbers as <linux/kfd_ioctl.h> defines them.
constexpr uint32_t kNrCreate = _IOC_NR(AMDKFD_IOC_CREATE_EVENT);
constexpr uint32_t kNrDestroy = _IOC_NR(AMDKFD_IOC_DESTROY_EVENT);
constexpr uint32_t kNrSet = _IOC_NR(AMDKFD_IOC_SET_EVENT);
constexpr uint32_t kNrReset = _IOC_NR(AMDKFD_IOC_RESET_EVENT);
constexpr uint32_t kNrWait = _IOC_NR(AMDKFD_IOC_WAIT_EVENTS);

// kfd_events.h: signal events take the low ids (their slot), the others the upper half.
constexpr uint32_t kFirstNonsignalId = (INT_MAX >> 1) + 1;
constexpr uint64_t kUnsignaledSlot = ~0ull;
constexpr uint64_t kMmapTypeEvents = 0x2ull << 62;
constexpr uint64_t kMmapTypeMask = 0x3ull << 62;
// allocate_event_notification_slot: "Oldest user mode expects 256 event slots" of the page the
// kernel allocates, until the process maps more of it.
constexpr uint64_t kKernelPageFirstMapped = 256 * 8;
constexpr uint64_t kSignalPageBytes = KFD_SIGNAL_EVENT_LIMIT * 8;

bool is_signal_type(uint32_t type) {
  return type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT;
}

// page_slots(): slots 0..n-1 of the event page, as the kernel reads them. The kernel's own page is
// shared with the process and the GPU, which write it concurrently: atomic loads and stores.
bool read_slots(HostEnv& env, const detail::Process& p, uint64_t* out, std::size_t n) {
  if (p.kernel_signal_page) {
    for (std::size_t i = 0; i < n; ++i)
      out[i] = std::atomic_ref<uint64_t>(p.kernel_signal_page[i]).load(std::memory_order_acquire);
    return true;
  }
  return env.read_memory(p.pid, p.signal_page_va, out, n * 8);
}

void write_slot(HostEnv& env, const detail::Process& p, uint32_t id, uint64_t value) {
  if (p.kernel_signal_page) {
    std::atomic_ref<uint64_t>(p.kernel_signal_page[id]).store(value, std::memory_order_release);
    return;
  }
  env.write_memory(p.pid, p.signal_page_va + uint64_t{id} * 8, &value, sizeof value);
}

}  // namespace

std::optional<detail::IoctlTableEntry> detail::event_ioctl_entry(uint32_t nr) {
  switch (nr) {
    case kNrCreate:
      return IoctlTableEntry{sizeof(kfd_ioctl_create_event_args), true, true};
    case kNrDestroy:
      return IoctlTableEntry{sizeof(kfd_ioctl_destroy_event_args), true, false};
    case kNrSet:
      return IoctlTableEntry{sizeof(kfd_ioctl_set_event_args), true, false};
    case kNrReset:
      return IoctlTableEntry{sizeof(kfd_ioctl_reset_event_args), true, false};
    case kNrWait:
      return IoctlTableEntry{sizeof(kfd_ioctl_wait_events_args), true, true};
    default:
      return std::nullopt;
  }
}

namespace {

// KFD 1.14's kfd_hsa_signal_event_data: the first 8 bytes of kfd_event_data's union.
uint64_t& last_event_age(kfd_event_data& d) { return *reinterpret_cast<uint64_t*>(&d); }

// test_event_condition: COMPLETE when one (any) or every (all) waiter is activated, FAIL when an
// event was destroyed under the wait, else TIMEOUT (keep sleeping).
uint32_t wait_condition(const detail::EventWait& w, bool all) {
  std::size_t activated = 0;
  for (const auto& x : w.waiters) {
    if (x.gone) return KFD_IOC_WAIT_RESULT_FAIL;
    if (x.activated) {
      if (!all) return KFD_IOC_WAIT_RESULT_COMPLETE;
      ++activated;
    }
  }
  return activated == w.waiters.size() ? KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT;
}

bool wait_for_all(const detail::EventWait& w) {
  return load<kfd_ioctl_wait_events_args>(w.call).wait_for_all != 0;
}

// The end of kfd_wait_on_events with `result`: the ages of activated age-aware waiters copied back
// (copy_signaled_event_data), wait_result stored in the call's arguments; the return value.
long conclude_wait(HostEnv& env, const detail::Process& p, const detail::EventWait& w,
                   uint32_t result) {
  auto a = load<kfd_ioctl_wait_events_args>(w.call);
  long ret = result == KFD_IOC_WAIT_RESULT_FAIL ? -EIO : 0;
  if (result == KFD_IOC_WAIT_RESULT_COMPLETE) {
    for (std::size_t i = 0; i < w.waiters.size() && ret == 0; ++i) {
      const auto& x = w.waiters[i];
      auto ev = p.events.find(x.event_id);
      if (ev == p.events.end()) {
        ret = -EINVAL;  // "event was destroyed"
      } else if (x.activated && x.age_enabled) {
        const uint64_t at = a.events_ptr + i * sizeof(kfd_event_data);
        if (!env.write_memory(w.call->caller.pid, at, &ev->second.age, sizeof ev->second.age))
          ret = -EFAULT;
      }
    }
  }
  a.wait_result = ret ? KFD_IOC_WAIT_RESULT_FAIL : result;
  store(w.call, a);
  return ret;
}

}  // namespace

void KfdDevice::State::set_event(const ProcessPtr& p, Event& ev) {
  if (++ev.age == 0) ev.age = 2;  // never wrapping to 0 ("unused") or 1 (the creation's)
  bool sleepers = false;
  for (auto& w : p->event_waits)
    for (auto& x : w.waiters)
      if (x.event_id == ev.id && x.queued && !x.gone) {
        x.activated = true;
        sleepers = true;
      }
  // An auto-reset event that woke sleepers is taken by them.
  ev.signaled = !ev.auto_reset || !sleepers;
  wake_event_waiters(p);
}

void KfdDevice::State::take_event_interrupts(const ProcessPtr& p) {
  if (!p->has_signal_page() || p->events.empty()) return;
  const uint32_t slots = static_cast<uint32_t>(p->signal_page_size / 8);
  const uint32_t last = std::min(p->events.rbegin()->first, slots ? slots - 1 : 0);
  std::vector<uint64_t> page(last + 1, kUnsignaledSlot);
  if (!read_slots(env, *p, page.data(), page.size())) return;
  for (auto& [id, ev] : p->events) {
    if (id > last) break;
    if (!is_signal_type(ev.type) || page[id] == kUnsignaledSlot) continue;
    // set_event_from_interrupt: the slot acknowledged, then the event set.
    write_slot(env, *p, id, kUnsignaledSlot);
    set_event(p, ev);
  }
}

int KfdDevice::State::map_event_page(int pid, uint64_t length) {
  // kfd_event_mmap: no more than the page's KFD_SIGNAL_EVENT_LIMIT slots (get_order of the two
  // compared, so whole pages), and only a page there is.
  constexpr uint64_t kPage = 4096;
  const uint64_t mapped = (length + kPage - 1) / kPage * kPage;
  if (mapped > kSignalPageBytes) return -EINVAL;
  ProcessPtr p = find_process(pid);
  if (!p || !p->has_signal_page()) return -EINVAL;
  // The kernel would remap the page behind the BO's kernel address too, which no user mode asks
  // for; only the page it allocated itself is shared memory here.
  if (!p->kernel_signal_page) return -EINVAL;
  p->signal_page_size = mapped;  // signal_mapped_size: slots up to what the process maps
  return 0;
}

int KfdDevice::check_kfd_mmap(int pid, uint64_t offset, uint64_t length) {
  std::lock_guard lock(state_->guard->mutex);
  if ((offset & kMmapTypeMask) == kMmapTypeEvents) return state_->map_event_page(pid, length);
  return 0;
}

void KfdDevice::State::wake_event_waiters(const ProcessPtr& p) {
  auto waits = std::move(p->event_waits);
  p->event_waits.clear();
  for (auto& w : waits) {
    if (w.call->cancelled) continue;
    const uint32_t result = wait_condition(w, wait_for_all(w));
    if (result == KFD_IOC_WAIT_RESULT_TIMEOUT) {
      p->event_waits.push_back(std::move(w));
      continue;
    }
    complete(w.call, conclude_wait(env, *p, w, result));
  }
}

std::optional<std::pair<ProcessPtr, detail::EventWait>> KfdDevice::State::take_event_wait(
    CallToken token) {
  for (auto& [pid, p] : processes) {
    auto& waits = p->event_waits;
    auto it = std::find_if(waits.begin(), waits.end(),
                           [&](const auto& w) { return w.call->token == token && !w.call->cancelled; });
    if (it == waits.end()) continue;
    detail::EventWait w = std::move(*it);
    waits.erase(it);
    return std::make_pair(p, std::move(w));
  }
  return std::nullopt;
}

void KfdDevice::time_out(CallToken token) {
  std::lock_guard lock(state_->guard->mutex);
  auto t = state_->take_event_wait(token);
  if (!t) return;
  auto& [p, w] = *t;
  // The last look of the kernel's loop: the condition, else TIMEOUT.
  state_->complete(w.call, conclude_wait(state_->env, *p, w, wait_condition(w, wait_for_all(w))));
}

bool KfdDevice::State::interrupt_event_wait(CallToken token, uint64_t slept_since_ns,
                                            uint64_t now_ns) {
  auto t = take_event_wait(token);
  if (!t) return false;
  auto& [p, w] = *t;
  auto a = load<kfd_ioctl_wait_events_args>(w.call);
  if (a.timeout != 0 && a.timeout != 0xffffffffu)
    a.timeout = wait_timeout_left_ms(a.timeout, options.config_hz, slept_since_ns, now_ns);
  a.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
  store(w.call, a);
  complete(w.call, -EINTR);
  // free_waiters(undo_auto_reset): an auto-reset event this waiter took is set again.
  for (const auto& x : w.waiters) {
    if (!x.activated || x.gone) continue;
    auto ev = p->events.find(x.event_id);
    if (ev != p->events.end() && ev->second.auto_reset) set_event(p, ev->second);
  }
  return true;
}

void KfdDevice::event_interrupt(int pid) {
  std::lock_guard lock(state_->guard->mutex);
  if (auto p = state_->find_process(pid)) state_->take_event_interrupts(p);
}

Outcome KfdDevice::State::event_ioctl(const CallPtr& call, const ProcessPtr& p) {
  const int pid = call->caller.pid;
  switch (call->nr) {
    case kNrCreate: {
      auto a = load<kfd_ioctl_create_event_args>(call);
      if (a.event_page_offset) {
        // A dGPU's event page is a buffer the process allocated: named by its handle. A page is
        // a page, the kernel's own included: "Event page is already set".
        if (p->has_signal_page()) return Outcome::done(-EINVAL);
        auto* d = p->device(static_cast<uint32_t>(a.event_page_offset >> 32));
        if (!d) return Outcome::done(-EINVAL);
        auto bo = d->bos.find(static_cast<uint32_t>(a.event_page_offset & 0xffffffffu));
        if (bo == d->bos.end()) return Outcome::done(-EINVAL);
        p->signal_page_va = bo->second.va;
        p->signal_page_size = std::min<uint64_t>(bo->second.size, KFD_SIGNAL_EVENT_LIMIT * 8);
        // kfd_event_page_set: every slot starts unsignaled (0xff bytes).
        std::vector<uint8_t> ff(p->signal_page_size, 0xff);
        env.write_memory(pid, p->signal_page_va, ff.data(), ff.size());
      }
      Event ev;
      ev.type = a.event_type;
      ev.auto_reset = a.auto_reset != 0;
      if (is_signal_type(a.event_type)) {
        // allocate_event_notification_slot: no page yet, the kernel allocates one (every slot
        // unsignaled) for the process to map at the offset returned below.
        if (!p->has_signal_page()) {
          void* mem = nullptr;
          if (self.on_kernel_memory) {
            mem = self.on_kernel_memory(pid, kMmapTypeEvents, kSignalPageBytes);
            if (!mem) return Outcome::done(-ENOMEM);  // allocate_signal_page failed
          } else {
            p->own_signal_page.assign(KFD_SIGNAL_EVENT_LIMIT, 0);
            mem = p->own_signal_page.data();
          }
          std::memset(mem, 0xff, kSignalPageBytes);
          p->kernel_signal_page = static_cast<uint64_t*>(mem);
          p->signal_page_size = kKernelPageFirstMapped;
        }
        const uint32_t slots = static_cast<uint32_t>(p->signal_page_size / 8);
        // kfd_event_init_process takes id 0 for itself (the interrupt handler's fast path for
        // bogus CP events without a context id): a process's first signal event is 1, and a page
        // of N slots holds N - 1 events.
        uint32_t id = 1;
        while (id < slots && p->events.count(id)) ++id;
        if (id == slots) return Outcome::done(-ENOSPC);
        write_slot(env, *p, id, kUnsignaledSlot);
        ev.id = id;
        a.event_page_offset = kMmapTypeEvents;
        a.event_slot_index = id;
      } else {
        uint32_t id = kFirstNonsignalId;
        while (p->events.count(id)) ++id;
        ev.id = id;
      }
      a.event_id = ev.id;
      a.event_trigger_data = ev.id;
      p->events[ev.id] = ev;
      store(call, a);
      return Outcome::done(0);
    }
    case kNrDestroy: {
      auto a = load<kfd_ioctl_destroy_event_args>(call);
      if (!p->events.erase(a.event_id)) return Outcome::done(-EINVAL);
      // destroy_event: its sleeping waiters wake and fail (-EIO, wait_result FAIL).
      for (auto& w : p->event_waits)
        for (auto& x : w.waiters)
          if (x.event_id == a.event_id && x.queued) x.gone = true;
      wake_event_waiters(p);
      return Outcome::done(0);
    }
    case kNrSet:
    case kNrReset: {
      // Both args are one event_id; only signal events can be set or reset by the CPU.
      auto a = load<kfd_ioctl_set_event_args>(call);
      auto it = p->events.find(a.event_id);
      if (it == p->events.end() || it->second.type != KFD_IOC_EVENT_SIGNAL)
        return Outcome::done(-EINVAL);
      if (call->nr == kNrSet) {
        set_event(p, it->second);
      } else {
        it->second.signaled = false;
      }
      return Outcome::done(0);
    }
    case kNrWait: {
      // kfd_wait_on_events. Interrupts that came before the wait are taken first.
      take_event_interrupts(p);
      auto a = load<kfd_ioctl_wait_events_args>(call);
      detail::EventWait w{call, {}};
      auto fail = [&](long err) {
        a.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
        store(call, a);
        return Outcome::done(err);
      };
      // init_event_waiter, event by event: each takes an auto-reset event that is set (even when
      // a later one fails the call), and is queued on the event unless already activated.
      for (uint32_t i = 0; i < a.num_events; ++i) {
        kfd_event_data d{};
        if (!env.read_memory(pid, a.events_ptr + uint64_t{i} * sizeof d, &d, sizeof d))
          return fail(-EFAULT);
        auto it = p->events.find(d.event_id);
        if (it == p->events.end()) return fail(-EINVAL);
        Event& ev = it->second;
        detail::EventWaiter x;
        x.event_id = ev.id;
        x.activated = ev.signaled;
        if (ev.auto_reset) ev.signaled = false;
        const uint64_t seen = last_event_age(d);
        if (ev.type == KFD_IOC_EVENT_SIGNAL && seen != 0) {
          x.age_enabled = true;
          if (seen != ev.age) x.activated = true;
        }
        x.queued = !x.activated;
        w.waiters.push_back(x);
      }
      const uint32_t result = wait_condition(w, a.wait_for_all != 0);
      if (result != KFD_IOC_WAIT_RESULT_TIMEOUT || a.timeout == 0)
        return Outcome::done(conclude_wait(env, *p, w, result));
      // Asleep until a set, an interrupt, the timeout (the transport keeps the time:
      // KfdDevice::time_out) or a signal (KfdDevice::interrupt). Timeouts above 2^31-1 ms are
      // finite, as user_timeout_to_jiffies makes them.
      p->event_waits.push_back(std::move(w));
      return Outcome::parked(a.timeout == 0xffffffffu ? 0 : std::min(a.timeout, 0x7fffffffu));
    }
  }
  return Outcome::done(-ENOTTY);
}

}  // namespace gpreempt::sim
