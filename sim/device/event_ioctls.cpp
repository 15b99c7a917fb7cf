// KFD events (docs/kfd-interface.md#events): CREATE_EVENT (which also takes the event page on a
// dGPU), DESTROY_EVENT, SET_EVENT, RESET_EVENT and WAIT_EVENTS. The GPU signals an event by writing
// its slot of the event page and raising an interrupt; here the slot write alone stands for both,
// and is noticed whenever a wait looks at the event.
#include <linux/kfd_ioctl.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "device_state.h"

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
// Without a user-supplied page the kernel allocates one and exposes 256 slots of it.
constexpr uint64_t kDefaultMappedSize = 256 * 8;

bool is_signal_type(uint32_t type) {
  return type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT;
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

// kfd_events.c set_event(): signaled, and one more in its age (never wrapping to 0 or 1).
void set_event(Event& ev) {
  ev.signaled = true;
  if (++ev.age == 0) ev.age = 2;
}

// What a waiter sees of the event right now: a slot the GPU wrote counts as its interrupt
// (set_event_from_interrupt acknowledges the slot and sets the event).
bool poll_event(HostEnv& env, int pid, const detail::Process& p, Event& ev) {
  if (is_signal_type(ev.type) && p.signal_page_va) {
    uint64_t slot = kUnsignaledSlot;
    const uint64_t at = p.signal_page_va + uint64_t{ev.id} * 8;
    if (env.read_memory(pid, at, &slot, sizeof slot) && slot != kUnsignaledSlot) {
      env.write_memory(pid, at, &kUnsignaledSlot, sizeof kUnsignaledSlot);
      set_event(ev);
    }
  }
  return ev.signaled;
}

// KFD 1.14's kfd_hsa_signal_event_data: the first 8 bytes of kfd_event_data's union.
uint64_t& last_event_age(kfd_event_data& d) { return *reinterpret_cast<uint64_t*>(&d); }

// kfd_wait_on_events without the sleep: -errno, or the wait result (COMPLETE / TIMEOUT) when
// `consume` is set and the condition holds (auto-reset events are reset as the waiter takes them).
long check_wait(HostEnv& env, int pid, detail::Process& p, const kfd_ioctl_wait_events_args& a,
                bool& satisfied) {
  std::vector<kfd_event_data> data(a.num_events);
  if (a.num_events &&
      !env.read_memory(pid, a.events_ptr, data.data(), data.size() * sizeof(kfd_event_data)))
    return -EFAULT;
  std::vector<Event*> evs;
  for (const auto& d : data) {
    auto it = p.events.find(d.event_id);
    if (it == p.events.end()) return -EINVAL;
    evs.push_back(&it->second);
  }
  // A waiter that says which age of a signal event it saw last (not 0, "unused") is activated by
  // any set since, even one another waiter's auto-reset took: init_event_waiter.
  std::vector<bool> activated(evs.size());
  std::size_t fired = 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    Event& ev = *evs[i];
    const uint64_t seen = last_event_age(data[i]);
    activated[i] = poll_event(env, pid, p, ev) ||
                   (ev.type == KFD_IOC_EVENT_SIGNAL && seen != 0 && seen != ev.age);
    fired += activated[i] ? 1 : 0;
  }
  satisfied = a.wait_for_all ? fired == evs.size() : fired > 0;
  if (!satisfied) return 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    Event& ev = *evs[i];
    if (ev.signaled && ev.auto_reset) ev.signaled = false;
    // copy_signaled_event_data: the age goes back to an age-aware waiter of an activated event.
    if (activated[i] && ev.type == KFD_IOC_EVENT_SIGNAL && last_event_age(data[i]) != 0) {
      const uint64_t at = a.events_ptr + i * sizeof(kfd_event_data);
      if (!env.write_memory(pid, at, &ev.age, sizeof ev.age)) return -EFAULT;
    }
  }
  return 0;
}

}  // namespace

void KfdDevice::State::wake_event_waiters(const ProcessPtr& p) {
  auto waiters = std::move(p->event_waiters);
  p->event_waiters.clear();
  for (auto& c : waiters) {
    if (c->cancelled) continue;
    auto a = load<kfd_ioctl_wait_events_args>(c);
    bool satisfied = false;
    long r = check_wait(env, c->caller.pid, *p, a, satisfied);
    if (r < 0 || satisfied) {
      a.wait_result = r < 0 ? KFD_IOC_WAIT_RESULT_FAIL : KFD_IOC_WAIT_RESULT_COMPLETE;
      store(c, a);
      complete(c, r);
    } else {
      p->event_waiters.push_back(c);
    }
  }
}

Outcome KfdDevice::State::event_ioctl(const CallPtr& call, const ProcessPtr& p) {
  const int pid = call->caller.pid;
  switch (call->nr) {
    case kNrCreate: {
      auto a = load<kfd_ioctl_create_event_args>(call);
      if (a.event_page_offset) {
        // A dGPU's event page is a buffer the process allocated: named by its handle.
        if (p->signal_page_va) return Outcome::done(-EINVAL);  // "Event page is already set"
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
        const uint64_t mapped = p->signal_page_va ? p->signal_page_size : kDefaultMappedSize;
        const uint32_t slots = static_cast<uint32_t>(mapped / 8);
        uint32_t id = 0;
        while (id < slots && p->events.count(id)) ++id;
        if (id == slots) return Outcome::done(-ENOSPC);
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
      wake_event_waiters(p);  // a waiter on it now fails as its lookup would
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
        set_event(it->second);
        wake_event_waiters(p);
      } else {
        it->second.signaled = false;
      }
      return Outcome::done(0);
    }
    case kNrWait: {
      auto a = load<kfd_ioctl_wait_events_args>(call);
      bool satisfied = false;
      long r = check_wait(env, pid, *p, a, satisfied);
      if (r < 0) return Outcome::done(r);
      if (satisfied || a.timeout == 0) {
        a.wait_result = satisfied ? KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT;
        store(call, a);
        return Outcome::done(0);
      }
      // The device keeps no clock: a wait with a timeout parks until an event is set and never
      // times out here. The shim therefore never sends one: it polls with timeout 0 and keeps
      // the time itself (sim/shim/kfd_file.cpp).
      p->event_waiters.push_back(call);
      return Outcome::parked();
    }
  }
  return Outcome::done(-ENOTTY);
}

}  // namespace gpreempt::sim
