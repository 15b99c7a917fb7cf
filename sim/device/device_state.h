// Internal state of the simulated KFD (not part of the transport contract): the kernel objects
// kfd_process / queue / process-device the handlers in kfd_device.cpp, queue_ioctls.cpp and
// dbg_trap*.cpp operate on, and the bookkeeping for calls the kernel would block.
#pragma once

#include <array>
#include <bitset>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "device_profile.h"
#include "kfd_device.h"

namespace gpreempt::kfd {
struct kfd_ioctl_dbg_trap_args;
}  // namespace gpreempt::kfd

namespace gpreempt::sim::detail {

inline constexpr int kENOTSUPP = 524;  // kernel-internal errno, returned as is
inline constexpr uint32_t kMaxQueuesPerProcessBitmap = 1024;  // KFD_MAX_NUM_OF_QUEUES_PER_PROCESS
inline constexpr uint32_t kMaxQueuesPerDevice = 4096;         // dqm total_queue_count limit
inline constexpr uint32_t kAddressWatchSlots = 4;
inline constexpr uint32_t kVmidsForKfd = 8;  // vm_info.vmid_num_kfd on GFX9 (sched_policy 1 limit)

struct Queue {
  uint32_t id = 0;
  uint32_t gpu_id = 0;
  uint32_t uapi_type = 0;  // as created (KFD_IOC_QUEUE_TYPE_*)
  uint64_t ring_base = 0;
  uint32_t ring_size = 0;
  uint64_t rptr = 0;
  uint64_t wptr = 0;
  uint64_t eop_addr = 0;
  uint64_t eop_size = 0;
  uint64_t ctx_save_addr = 0;
  uint32_t ctx_save_size = 0;
  uint32_t ctl_stack_size = 0;
  uint32_t percentage = 0;
  uint32_t priority = 0;
  uint32_t sdma_engine = 0;  // SDMA queues: engine and queue (RLC) slot
  uint32_t sdma_queue = 0;
  uint32_t doorbell_id = 0;
  uint64_t doorbell_offset = 0;
  uint64_t mqd_gpu_addr = 0;       // GPU address of the first XCC's MQD (cp_mqd_base_addr)
  uint32_t logical_xcc_start = 0;  // logical id of physical XCC 0 in this queue's MQDs
  uint64_t exception_status = 0;
  bool suspended = false;
  bool being_destroyed = false;

  bool is_sdma() const;
  bool is_compute() const { return !is_sdma(); }
  // QUEUE_IS_ACTIVE: mapped by the scheduler when not suspended.
  bool active() const {
    return !suspended && ring_size > 0 && ring_base != 0 && (percentage & 0xff) > 0;
  }
};

// A buffer object of ALLOC_MEMORY_OF_GPU (the kernel's kgd_mem): memory_ioctls.cpp.
struct Bo {
  uint64_t va = 0;
  uint64_t size = 0;
  uint32_t flags = 0;        // KFD_IOC_ALLOC_MEM_FLAGS_*
  uint64_t mmap_offset = 0;  // what ALLOC returned (render-node offset, or a /dev/kfd one)
  std::vector<uint32_t> mapped_on;  // gpu_ids whose page tables map it (MAP_MEMORY_TO_GPU)
};

struct ProcessDevice {
  uint32_t gpu_id = 0;
  uint64_t exception_status = 0;
  std::array<bool, kAddressWatchSlots> watch_used{};
  uint32_t queue_count = 0;     // qpd.queue_count
  uint64_t registered_seq = 0;  // when the process registered with the device's DQM (first queue)
  std::map<uint32_t, Bo> bos;   // alloc_idr: handle low 32 bits -> buffer
  uint64_t vram_usage = 0;      // pdd->vram_usage (bytes of VRAM BOs)
  bool vm_acquired = false;     // ACQUIRE_VM done
  std::optional<int> drm_file;  // pdd->drm_file: the file ACQUIRE_VM took (a HostEnv handle held)
};

// A KFD event (kfd_events.c): signal events own a slot of the event page, others do not.
struct Event {
  uint32_t id = 0;
  uint32_t type = 0;  // KFD_IOC_EVENT_*
  bool auto_reset = false;
  bool signaled = false;
  uint64_t age = 1;  // event_age: counts the times it was set (0 means "not used" to waiters)
};

// A call the kernel would have blocked, or one waiting for a process mutex held by another call.
struct Call {
  Caller caller;
  uint32_t nr = 0;
  std::size_t usize = 0;      // the caller's _IOC_SIZE
  bool copy_out = true;       // kernel table direction has OUT
  std::vector<uint8_t> kbuf;  // max(usize, kernel size) bytes, zero-filled beyond usize
  CallToken token = 0;
  bool cancelled = false;
  bool has_token = false;  // false for internal (no caller to answer)
  // A signal came while the call slept uninterruptibly (a mutex, the runlist): it stays pending,
  // so an interruptible sleep the call reaches afterwards ends at once (signal_pending()).
  bool signal_pending = false;
};
using CallPtr = std::shared_ptr<Call>;

// A WAIT_EVENTS call asleep in kfd_wait_on_events: one waiter per event it names
// (kfd_event_waiter). `queued`: on the event's wait queue (it was not activated when the wait
// began), so a set activates it; `gone`: the event was destroyed under it.
struct EventWaiter {
  uint32_t event_id = 0;
  bool activated = false;
  bool queued = false;
  bool age_enabled = false;  // a signal event waited on with a last_event_age (KFD 1.14)
  bool gone = false;
};
struct EventWait {
  CallPtr call;
  std::vector<EventWaiter> waiters;
};

// The call's argument struct, read from and written back to its kernel buffer (kbuf is never
// smaller than the struct).
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

struct Process {
  int pid = 0;
  bool alive = true;
  uint32_t pasid = 0;          // amdgpu PASID (MAP_PROCESS), lowest free from 0x8000
  uint32_t doorbell_slot = 0;  // index of the process doorbell frame (2 pages)
  bool xnack_enabled = false;
  std::vector<ProcessDevice> devices;  // process device order = machine GPU order
  std::list<Queue> queues;             // newest first
  std::bitset<kMaxQueuesPerProcessBitmap> queue_ids;

  // Runtime (ROCr) state: docs/kfd-interface.md#runtime-enable.
  uint32_t runtime_state = 0;
  uint64_t r_debug = 0;
  uint32_t ttmp_setup = 0;
  bool runtime_retry = false;
  int runtime_sema = 0;
  CallPtr runtime_waiter;

  // Debug session: docs/kfd-interface.md#debug-trap-operations.
  bool debug_trap_enabled = false;
  int debugger_pid = 0;  // 0 = none (self-debug records none)
  std::optional<int> event_file;
  uint64_t exception_enable_mask = 0;
  uint64_t exception_status = 0;  // process-level (EC_PROCESS_*)
  uint32_t wave_launch_mode = 0;
  uint32_t wave_launch_override_mask = 0;
  uint32_t wave_launch_override_mode = 0;
  uint32_t trap_flags = 0;
  int debugged_process_count = 0;  // as a debugger

  // The process mutex: held by a call waiting for the hardware scheduler; others queue behind.
  bool busy = false;
  std::deque<CallPtr> mutex_waiters;
  // Events (event_ioctls.cpp): signal events' slots are 8-byte words of the event page, a BO of
  // the process named by the first CREATE_EVENT that gives one (signal_page_va) or, when a signal
  // event comes first, a page the kernel allocates itself (kernel_signal_page, which the process
  // maps through /dev/kfd).
  std::map<uint32_t, Event> events;
  uint64_t signal_page_va = 0;               // 0 = no BO as event page
  uint64_t* kernel_signal_page = nullptr;    // KFD_SIGNAL_EVENT_LIMIT slots, or none
  std::vector<uint64_t> own_signal_page;     // its slots when the transport shares no memory
  uint64_t signal_page_size = 0;             // signal_mapped_size
  bool has_signal_page() const { return signal_page_va != 0 || kernel_signal_page != nullptr; }
  std::vector<EventWait> event_waits;  // WAIT_EVENTS calls asleep until an event is set
  // DESTROY_QUEUE calls waiting for their suspended queue to be resumed.
  std::vector<std::pair<uint32_t, CallPtr>> destroy_waiters;

  ProcessDevice* device(uint32_t gpu_id);
  const ProcessDevice* device(uint32_t gpu_id) const;
  Queue* queue(uint32_t id);
};
using ProcessPtr = std::shared_ptr<Process>;

// Kernel-side struct size and copy directions of one ioctl (the kernel's table,
// docs/kfd-interface.md#ioctl-dispatch).
struct IoctlTableEntry {
  std::size_t ksize = 0;
  bool in = false;
  bool out = false;
};
// GFX9 process apertures (GET_PROCESS_APERTURES_NEW, the device snapshot).
struct Apertures {
  uint64_t lds_base = 0, lds_limit = 0, scratch_base = 0, scratch_limit = 0, gpuvm_base = 0,
           gpuvm_limit = 0;
};
Apertures gfx9_apertures();

// The pre-1.13 ioctls the simulator serves for libhsakmt's start-up (legacy_ioctls.cpp).
std::optional<IoctlTableEntry> legacy_ioctl_entry(uint32_t nr);
std::optional<IoctlTableEntry> memory_ioctl_entry(uint32_t nr);
std::optional<IoctlTableEntry> event_ioctl_entry(uint32_t nr);

// Result of a handler: either finished now, or the call is parked (completes via on_complete).
struct Outcome {
  bool blocked = false;
  long ret = 0;
  uint32_t timeout_ms = 0;  // blocked: the sleep ends by itself after this long (0: never)
  static Outcome done(long r) { return {false, r, 0}; }
  static Outcome parked(uint32_t timeout_ms = 0) { return {true, 0, timeout_ms}; }
};

// Keeps the device reachable from asynchronous Hws completions without outliving it.
struct Guard {
  std::recursive_mutex mutex;
  bool alive = true;
};

}  // namespace gpreempt::sim::detail

namespace gpreempt::sim {

struct KfdDevice::State {
  State(KfdDevice& self, const DeviceProfile& profile, DeviceOptions options, HostEnv& env,
        std::shared_ptr<Hws> hws);

  KfdDevice& self;
  DeviceProfile profile;
  DeviceOptions options;
  HostEnv& env;
  std::shared_ptr<Hws> hws;
  std::shared_ptr<detail::Guard> guard = std::make_shared<detail::Guard>();

  std::map<int, detail::ProcessPtr> processes;      // by tgid
  std::map<CallToken, detail::CallPtr> pending;     // parked calls, by token
  std::map<uint32_t, std::vector<bool>> sdma_used;  // per gpu_id: engine-major slot use
  std::map<uint32_t, uint32_t> device_queue_count;  // per gpu_id: dqm total_queue_count
  std::map<uint32_t, uint32_t> compute_queues_created;
  std::map<uint32_t, uint32_t> device_watch_ids;  // per gpu_id: address-watch slots in use (bits)
                                                  // // per gpu_id: rotates logical XCC ids
  uint64_t next_mqd_addr = 0;
  uint64_t next_drm_offset = 0;  // the next render-node BO offset (all nodes, all processes)
  uint64_t next_register_seq = 1;

  // ---- kfd_device.cpp: dispatch, processes, runtime enable ----------------------------------
  detail::Outcome dispatch(const detail::CallPtr& call);
  detail::ProcessPtr find_process(int pid) const;
  detail::ProcessPtr create_process(int pid);
  void complete(const detail::CallPtr& call, long ret);
  // The process mutex: true when taken; otherwise the call is queued behind the holder.
  bool lock_or_queue(detail::Process& p, const detail::CallPtr& call);
  void release(const detail::ProcessPtr& p);

  detail::Outcome get_version(const detail::CallPtr& call);
  detail::Outcome runtime_enable(const detail::CallPtr& call);
  // legacy_ioctls.cpp: GET_PROCESS_APERTURES_NEW, ACQUIRE_VM, SET_MEMORY_POLICY, ...
  detail::Outcome legacy_ioctl(const detail::CallPtr& call);
  // memory_ioctls.cpp: ALLOC/FREE/MAP/UNMAP_MEMORY, AVAILABLE_MEMORY.
  detail::Outcome memory_ioctl(const detail::CallPtr& call, const detail::ProcessPtr& p);
  // event_ioctls.cpp: CREATE/DESTROY/SET/RESET_EVENT, WAIT_EVENTS.
  detail::Outcome event_ioctl(const detail::CallPtr& call, const detail::ProcessPtr& p);
  // set_event(): signaled (unless an auto-reset event has sleeping waiters, which it activates),
  // one more in its age; then the sleepers whose condition now holds are woken.
  void set_event(const detail::ProcessPtr& p, detail::Event& ev);
  // kfd_signal_event_interrupt: every signal event whose slot the GPU wrote is acknowledged and set.
  void take_event_interrupts(const detail::ProcessPtr& p);
  // kfd_event_mmap: the checks of an mmap of the event page, which then maps `length` bytes.
  int map_event_page(int pid, uint64_t length);
  // Completes the process's sleeping WAIT_EVENTS calls whose condition holds (or whose event is
  // gone: -EIO).
  void wake_event_waiters(const detail::ProcessPtr& p);
  // The sleeping WAIT_EVENTS call of `token` and its process, taken off the process's list.
  std::optional<std::pair<detail::ProcessPtr, detail::EventWait>> take_event_wait(CallToken token);
  // A signal ends the sleeping WAIT_EVENTS call of `token` (KfdDevice::interrupt); false when
  // there is none.
  bool interrupt_event_wait(CallToken token, uint64_t slept_since_ns, uint64_t now_ns);
  // Ends a wait: COMPLETE (ages copied back) when its condition holds, else `otherwise`.
  void finish_event_wait(const detail::ProcessPtr& p, detail::EventWait& w, uint32_t otherwise);

  // ---- queue_ioctls.cpp -----------------------------------------------------------------------
  detail::Outcome create_queue(const detail::CallPtr& call);
  detail::Outcome destroy_queue(const detail::CallPtr& call);
  detail::Outcome update_queue(const detail::CallPtr& call);
  void remove_queue(detail::Process& p, std::list<detail::Queue>::iterator it);
  void wake_destroy_waiters(const detail::ProcessPtr& p);

  // Exceptions (kfd_dbg_ev_raise): sets status bits and signals the event file when enabled.
  void raise(detail::Process& p, uint64_t mask, uint32_t gpu_id, uint32_t queue_id);
  void signal(detail::Process& p);

  // ---- runlist chains: one Hws::execute_runlist per step, in order, completion-driven ------
  struct Step {
    uint32_t gpu_id = 0;
    uint32_t grace_period = 0;
    std::function<bool()> skip;                 // checked when the step is reached
    std::function<void()> before;               // state change right before the runlist is rebuilt
    std::function<void(int err)> after;         // the scheduler's answer
    bool no_runlist = false;                    // a state change between remaps, no scheduler call
    std::function<std::vector<Step>()> expand;  // no_runlist only: steps to run next
  };
  struct Chain {
    std::vector<Step> steps;
    std::size_t next = 0;
    std::function<void()> finish;
  };
  void advance(const std::shared_ptr<Chain>& chain);
  // Runs `steps` holding p's mutex, then `finish` (nullopt: the call stays parked).
  detail::Outcome run_locked(const detail::ProcessPtr& p, const detail::CallPtr& call,
                             std::vector<Step> steps, std::function<std::optional<long>()> finish);
  std::vector<QueueView> runnable(uint32_t gpu_id) const;
  QueueView view(const detail::Process& p, const detail::Queue& q) const;

  // ---- dbg_trap.cpp: the prologue and the session ----------------------------------------------
  detail::Outcome dbg_trap(const detail::CallPtr& call);
  // Steps that resume every suspended queue and refresh each GPU's runlist (deactivate).
  std::vector<Step> deactivate_steps(const detail::ProcessPtr& p);
  std::vector<Step> activate_steps(const detail::ProcessPtr& p);
  // kfd_dbg_trap_disable minus the runlist work (done by deactivate_steps beforehand).
  void finish_disable(detail::Process& p);
  // Debug session teardown when the debugger's address space is gone
  // (docs/kfd-interface.md#session-lifetime).
  void debugger_exited(int debugger_pid);
  // One handler per op, called once the prologue has found and locked the target `t`; `a` is the
  // caller's arguments (store() them back where the kernel copies them out).
  using DbgArgs = kfd::kfd_ioctl_dbg_trap_args;
  detail::Outcome dbg_enable(const detail::CallPtr& call, const detail::ProcessPtr& t, DbgArgs& a);
  detail::Outcome dbg_disable(const detail::CallPtr& call, const detail::ProcessPtr& t, DbgArgs& a);
  detail::Outcome dbg_send_runtime_event(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                         DbgArgs& a);
  // dbg_trap_queues.cpp
  detail::Outcome dbg_suspend_queues(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                     DbgArgs& a);
  detail::Outcome dbg_resume_queues(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                    DbgArgs& a);
  void write_wave_state_headers(const detail::Process& p);
  // dbg_trap_exceptions.cpp
  detail::Outcome dbg_set_exceptions_enabled(const detail::CallPtr& call,
                                             const detail::ProcessPtr& t, DbgArgs& a);
  detail::Outcome dbg_query_debug_event(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                        DbgArgs& a);
  detail::Outcome dbg_query_exception_info(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                           DbgArgs& a);
  detail::Outcome dbg_queue_snapshot(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                     DbgArgs& a);
  detail::Outcome dbg_device_snapshot(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                      DbgArgs& a);
  // dbg_trap_settings.cpp
  detail::Outcome dbg_set_wave_launch_override(const detail::CallPtr& call,
                                               const detail::ProcessPtr& t, DbgArgs& a);
  detail::Outcome dbg_set_wave_launch_mode(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                           DbgArgs& a);
  detail::Outcome dbg_set_address_watch(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                        DbgArgs& a);
  detail::Outcome dbg_clear_address_watch(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                          DbgArgs& a);
  detail::Outcome dbg_set_flags(const detail::CallPtr& call, const detail::ProcessPtr& t,
                                DbgArgs& a);
  // kfd_dbg_clear_process_address_watch(): frees the process's slots on every device.
  void clear_address_watches(detail::Process& p);

  // ---- render_*.cpp -------------------------------------------------------------------------
  std::map<std::string, std::string> render() const;
  void render_topology(std::map<std::string, std::string>& out) const;
  void render_proc(std::map<std::string, std::string>& out) const;
  static void render_one_proc(int pid, const detail::Process& p,
                              std::map<std::string, std::string>& t);
  std::map<std::string, std::string> render_part(FilePart part, int pid) const;
  std::string render_mqds() const;
  std::string render_hqds() const;
  std::string render_rls() const;
  // The DQM's process list for a device (newest registered first) with each process's active
  // queues: what the runlist maps, in MAP_QUEUES order.
  struct RunlistProcess {
    const detail::Process* process = nullptr;
    std::vector<const detail::Queue*> active;
    uint32_t queue_count = 0;
  };
  std::vector<RunlistProcess> runlist_of(uint32_t gpu_id) const;
};

}  // namespace gpreempt::sim
