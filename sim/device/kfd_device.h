// The simulated KFD: the kernel driver's state machine
// (docs/kfd-interface.md#what-a-simulated-kfd-must-reproduce) as a pure object. It knows nothing
// about sockets, LD_PRELOAD or time; the daemon (sim/daemon) feeds it requests from the shim, and
// the GPU model (sim/gpu) plays the hardware scheduler behind `Hws`.
//
// Contract between sim/device (the state machine) and sim/daemon (the transport):
//  * every call arrives with the calling process (tgid) and thread (tid);
//  * ioctl arguments arrive as exactly the caller's _IOC_SIZE(request) bytes and are updated in
//    place following the kernel's copy rules (docs/kfd-interface.md#ioctl-dispatch);
//  * pointers inside arguments are caller addresses, read/written through HostEnv (the daemon
//    uses process_vm_readv/writev; a failed access is -EFAULT exactly where the kernel's would be);
//  * a call the kernel would block (RUNTIME_ENABLE while debugged, destroy of a suspended queue,
//    SUSPEND/RESUME until the runlist is remapped) returns Blocked and completes later through
//    `on_complete` with the same token.
#pragma once

#include <time.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpreempt::sim {

struct Caller {
  int pid = 0;  // thread-group id of the calling process
  int tid = 0;  // the calling thread (the ptrace check compares with this one)
};

// What the device needs from the host, injected so unit tests can fake it.
class HostEnv {
 public:
  virtual ~HostEnv() = default;
  // Thread-group id of task `tid` (any thread of a process names it), or nullopt if no such live
  // task with an address space (kernel: -ESRCH).
  virtual std::optional<int> tgid_of(int tid) = 0;
  // TracerPid of task `tid` as /proc/<tid>/status shows it (0 when not traced).
  virtual int tracer_of(int tid) = 0;
  // Copy from/to the memory of process `pid`. false = the kernel's copy_*_user would fault.
  virtual bool read_memory(int pid, uint64_t addr, void* dst, std::size_t len) = 0;
  virtual bool write_memory(int pid, uint64_t addr, const void* src, std::size_t len) = 0;
  // fget(fd) in process `pid`'s fd table: a handle the device keeps, or nullopt (-EBADF).
  virtual std::optional<int> acquire_file(int pid, int fd) = 0;
  virtual void release_file(int handle) = 0;
  // Write one byte '.' to the file, never blocking (a full pipe just drops it, as the kernel).
  virtual void signal_file(int handle) = 0;
  // Whether two handles name one open file (the kernel compares struct file pointers: a dup of a
  // descriptor is the same file, a second open of the same path is not).
  virtual bool same_file(int handle_a, int handle_b) = 0;
  // The render-node minor of the simulated GPU whose amdgpu DRM file `handle` is, or nullopt when
  // the file is not an amdgpu DRM file at all (amdgpu_file_to_fpriv tells them apart by the
  // file's f_op, so a /dev/null or a pipe is refused however it was opened).
  virtual std::optional<uint32_t> drm_render_minor(int handle) = 0;
};

// A queue as the hardware side sees it.
struct QueueView {
  int pid = 0;
  uint32_t queue_id = 0;
  uint32_t gpu_id = 0;
  uint32_t uapi_type = 0;  // KFD_IOC_QUEUE_TYPE_*
  uint64_t ring_base = 0;
  uint64_t ring_size = 0;
  uint64_t read_pointer_address = 0;
  uint64_t write_pointer_address = 0;
  uint32_t priority = 0;  // 0..15 as created
  bool suspended = false;
  // Extensions (appended so existing aggregate initialisers keep working).
  uint64_t doorbell_offset = 0;  // the mmap cookie CREATE_QUEUE returned
  uint32_t doorbell_id = 0;      // doorbell index inside the process doorbell page(s)
  uint64_t ctx_save_restore_address = 0;
  uint32_t ctx_save_restore_size = 0;
  uint32_t percentage = 0;  // queue_percentage & 0xff
  bool active = false;      // mapped when the runlist is (re)built
};

// The hardware scheduler (HWS firmware + CP) behind the device. The default one completes every
// runlist change at once; the GPU model (sim/gpu) implements timing, slots and CWSR.
class Hws {
 public:
  virtual ~Hws() = default;
  virtual void queue_created(const QueueView&) {}
  virtual void queue_destroyed(int /*pid*/, uint32_t /*queue_id*/, uint32_t /*gpu_id*/) {}
  // UPDATE_QUEUE changed ring base/size, percentage or priority (extension).
  virtual void queue_updated(const QueueView&) {}
  // Unmap the whole dynamic runlist of `gpu_id` and map it again with the queues that are now
  // runnable (suspended ones left out). `grace_period` is the DBG_TRAP value (1K-clock units,
  // 0xffffffff = default). Call `done(0)` once remapped, `done(-ETIME)` on preemption timeout,
  // `done(-EIO)` if a reset is in progress. May call `done` before returning.
  virtual void execute_runlist(uint32_t gpu_id, uint32_t grace_period,
                               const std::vector<QueueView>& runnable,
                               std::function<void(int)> done) = 0;
  // The GPU's timestamp counter, which GET_CLOCK_COUNTERS reads and a packet processor writes
  // into completion signals (GFX9: 100 MHz, kGpuClockPeriodNs a tick). This one counts
  // CLOCK_MONOTONIC_RAW; a GPU model whose CP stamps signals counts its own clock.
  virtual uint64_t gpu_clock_counter() const;
};

// Nanoseconds per tick of the GPU's timestamp counter (100 MHz on GFX9).
inline constexpr uint64_t kGpuClockPeriodNs = 10;

// Inline: the GPU model's library implements Hws without linking the device.
inline uint64_t Hws::gpu_clock_counter() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec)) /
         kGpuClockPeriodNs;
}

class InstantHws final : public Hws {
 public:
  void execute_runlist(uint32_t, uint32_t, const std::vector<QueueView>&,
                       std::function<void(int)> done) override {
    done(0);
  }
};

using CallToken = uint64_t;

struct IoctlResult {
  bool blocked = false;  // true: completes later via KfdDevice::on_complete
  long ret = 0;          // when !blocked: the syscall's return value (>= 0, or -errno)
  // When blocked: the kernel's sleep would end by itself after this many ms (a WAIT_EVENTS
  // timeout); the transport then calls KfdDevice::time_out. 0: only another event ends it.
  uint32_t timeout_ms = 0;
};

}  // namespace gpreempt::sim

namespace gpreempt::sim {

struct DeviceProfile;  // sim/device/device_profile.h

struct DeviceOptions {
  uint32_t minor_version = 22;  // GET_VERSION minor; lower it (e.g. 12) to test version gates
  // Module parameter sched_policy: 0 = HWS, 1 = HWS without oversubscription, 2 = no HWS.
  int sched_policy = 0;
  // CONFIG_HZ of the simulated kernel (Debian's is 250; it must divide 1000): WAIT_EVENTS counts
  // its timeout in jiffies, so an interrupted wait writes back a multiple of 1000/HZ ms.
  uint32_t config_hz = 250;
};

// Thread safety: every member may be called from any thread (an internal recursive mutex
// serialises them). `on_complete` runs with that mutex held, on the thread that finished the call:
// the one calling Hws's `done`, or the one whose ioctl released it (SEND_RUNTIME_EVENT, RESUME).
// It may call back into the device from there.
// The independently rendered parts of KfdDevice::render_files().
enum class FilePart { kTopology, kProcesses, kProcess, kMqds, kHqds, kRls };

class KfdDevice {
 public:
  KfdDevice(const DeviceProfile& profile, DeviceOptions options, HostEnv& env,
            std::shared_ptr<Hws> hws = std::make_shared<InstantHws>());
  ~KfdDevice();
  KfdDevice(const KfdDevice&) = delete;
  KfdDevice& operator=(const KfdDevice&) = delete;

  // open("/dev/kfd") by process `caller.pid`: find-or-create its kfd_process. 0 or -errno.
  int open(const Caller& caller);
  // The process's address space is gone (exit or exec): docs/kfd-interface.md#session-lifetime
  // (debugged processes of a departing debugger are disabled and resumed; its own queues are
  // destroyed; blocked calls of its threads are dropped without completion).
  void process_exited(int pid);

  // One ioctl on a /dev/kfd fd opened by `caller.pid` (the transport has already rejected fds
  // used by another process with -EBADF). `args` = the caller's _IOC_SIZE(request) bytes.
  IoctlResult ioctl(const Caller& caller, unsigned long request, std::span<uint8_t> args,
                    CallToken token);
  // A render-node buffer of process `pid` was freed: what the transport keeps for its mmap offset
  // (shared memory) can go. Called with the device's mutex held.
  std::function<void(int pid, uint64_t mmap_offset)> on_buffer_freed;
  // Memory the driver allocates for process `pid` and lets it map through /dev/kfd at
  // `mmap_offset` (the event page kfd_events.c allocates when a signal event comes before any
  // page was given): the transport's shared memory, so that the process's mapping, the simulated
  // GPU and the device see the same bytes. It must stay until the process is gone; nullptr when
  // none can be had (-ENOMEM). Called with the device's mutex held. Unset, the device keeps the
  // bytes itself, where only it sees them.
  std::function<void*(int pid, uint64_t mmap_offset, std::size_t bytes)> on_kernel_memory;
  // A blocked call is finished: its return value and the bytes to copy back to the caller.
  std::function<void(CallToken, long ret, std::vector<uint8_t> args)> on_complete;
  // The thread of a blocked call was interrupted or died: forget the call (kernel: -ERESTARTSYS).
  void cancel(CallToken token);
  // The device keeps no clock: the transport tells it that the timeout_ms of a blocked call has
  // passed. A WAIT_EVENTS call then completes, COMPLETE if its events came meanwhile, else
  // TIMEOUT (docs/kfd-interface.md#events). Nothing happens for a call no longer blocked.
  void time_out(CallToken token);
  // A signal with a handler reached the thread of blocked call `token` (without SA_RESTART; with
  // it, only in a RUNTIME_ENABLE, whose -EINTR the kernel never restarts). The
  // calls the kernel sleeps in interruptibly complete now, and the function returns true:
  //  * WAIT_EVENTS: -EINTR (-ERESTARTSYS as that caller sees it), wait_result FAIL, the timeout
  //    left written back as the kernel counts it (in jiffies of DeviceOptions::config_hz of the
  //    transport's monotonic clock, from `slept_since_ns`, when the wait went to sleep, to
  //    `now_ns`), an auto-reset event it had taken set again;
  //  * DESTROY_QUEUE waiting for its suspended queue: -EINTR (-ERESTARTSYS), the queue stays
  //    marked as being destroyed;
  //  * RUNTIME_ENABLE waiting for the debugger: -EINTR (down_interruptible), and the next call
  //    goes on waiting.
  // Any other blocked call sleeps uninterruptibly in the kernel (a mutex, the runlist's fence
  // wait): it goes on (false), with the signal pending, so an interruptible sleep it reaches
  // later ends at once. false too for a call no longer blocked.
  bool interrupt(CallToken token, uint64_t slept_since_ns, uint64_t now_ns);
  // The GPU wrote event-page slots of process `pid` and raised its interrupt
  // (kfd_signal_event_interrupt): the events are set and their sleeping waiters woken.
  void event_interrupt(int pid);

  // Every sysfs/debugfs file and directory of the simulated machine, rendered from the current
  // state, keyed by path relative to the machine root: "sys/class/kfd/kfd/topology/...",
  // "sys/class/kfd/kfd/proc/<pid>/queues/<id>/size", "sys/kernel/debug/kfd/mqds", ...
  // A key ending in '/' is an (otherwise empty) directory. Values are the exact bytes.
  std::map<std::string, std::string> render_files() const;
  // One part of those files, for a reader that needs only some (kfdsimd renders what a lookup
  // touches): the same bytes render_files() has, keyed by the device path only
  // ("sys/devices/virtual/kfd/kfd/…"; the class path is a symlink to it on disk). kProcess is the
  // directory proc/<pid>/ (nothing when KFD has no such process); kProcesses is proc/ with every
  // process in it.
  std::map<std::string, std::string> render_files(FilePart part, int pid = 0) const;

  // Read-only views for tools, tests and the GPU model.
  std::vector<QueueView> queues() const;
  const DeviceProfile& profile() const;
  // mmap of render node `render_minor` at `offset` for `length` bytes by process `pid`: 0 when a
  // buffer of the process on that GPU starts there and is at least that long, else -EINVAL
  // (drm_gem_mmap finds no such object).
  int check_render_mmap(int pid, uint32_t render_minor, uint64_t offset, uint64_t length) const;
  // mmap of /dev/kfd at `offset` for `length` bytes by process `pid`, as kfd_mmap checks it: the
  // event page (KFD_MMAP_TYPE_EVENTS) only when the kernel allocated one and for at most its
  // KFD_SIGNAL_EVENT_LIMIT slots, else -EINVAL; the process then uses the slots it mapped. Other
  // offsets (doorbells, MMIO) are not checked: 0.
  int check_kfd_mmap(int pid, uint64_t offset, uint64_t length);
  // Bytes of VRAM all processes' buffers hold on `gpu_id` (amdgpu's mem_info_vram_used).
  uint64_t vram_used(uint32_t gpu_id) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpreempt::sim
