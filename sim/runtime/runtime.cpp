#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "gpreempt/kfd_abi.h"
#include "simrt/simrt.hpp"
#include "sim/gpu/aql.h"
#include "topology.h"

namespace simrt {

namespace aql = gpreempt::sim::aql;
namespace kfd = gpreempt::kfd;

namespace {

constexpr std::size_t kEopBytes = 4096;
// The process doorbell frame: 1024 64-bit doorbells over two pages (SOC15).
constexpr uint64_t kDoorbellFrame = 8192;

[[noreturn]] void fail(int err, const std::string& what) {
  throw Error(err, what + ": " + std::strerror(err));
}

void* aligned_zeroed(std::size_t align, std::size_t bytes) {
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (!p) throw Error(ENOMEM, "out of memory");
  std::memset(p, 0, bytes);
  return p;
}

template <typename T>
std::atomic_ref<T> at(void* base, uint64_t off) {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(static_cast<char*>(base) + off));
}

// The /dev/kfd descriptors of this process's open runtimes: what a wait asks whether the GPU
// is still there.
std::mutex g_open_mu;
std::set<int> g_open_fds;
// The completion bells of this process's open runtimes (aql.h kCompletionBellDoorbell): a wait
// sleeps on the first one. A signal completed on another runtime's GPU wakes the wait only at its
// timeout, as before there were bells.
std::vector<uint32_t*> g_bells;

uint32_t* a_bell() {
  std::lock_guard lk(g_open_mu);
  return g_bells.empty() ? nullptr : g_bells.front();
}

// Memory the GPU writes says nothing when the GPU is gone (a simulated one whose kfdsimd died):
// a long wait asks the device now and then. The KFD answers GET_VERSION for as long as its file
// works; the simulator's shim fails it with ENODEV once the daemon behind it has gone (and says
// on stderr which daemon, and why). Throws simrt::Error then.
void check_device() {
  std::lock_guard lk(g_open_mu);
  for (int fd : g_open_fds) {
    kfd::kfd_ioctl_get_version_args v{};
    int r;
    while ((r = ::ioctl(fd, kfd::AMDKFD_IOC_GET_VERSION, &v)) < 0 && errno == EINTR) {
    }
    if (r < 0) {
      const int e = errno;
      throw Error(e, std::string("the GPU went away while waiting for it (AMDKFD_IOC_GET_VERSION: ") +
                         std::strerror(e) + ")");
    }
  }
}

constexpr auto kDeviceCheckPeriod = std::chrono::milliseconds(100);

// Waiting on memory another process (the simulated CP) writes: spin briefly, then sleep in
// growing steps, so short kernels are seen quickly and long waits cost little CPU. With a
// completion bell a step is a sleep on its futex, which the simulated GPU wakes as soon as it has
// written completion signals of this process: the wait ends then, not at the end of a nap (up to
// 100 µs later, 56-100 µs median as measured, docs/simulator.md "Live timing").
template <typename Pred>
bool wait_until(Pred done, std::chrono::nanoseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  auto next_check = start + kDeviceCheckPeriod;
  auto nap = std::chrono::microseconds(5);
  uint32_t* bell = a_bell();
  for (int spin = 0;; ++spin) {
    if (done()) return true;
    if (timeout != std::chrono::nanoseconds::max() &&
        std::chrono::steady_clock::now() - start >= timeout)
      return false;
    if (spin < 200) continue;
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_check) {
      check_device();
      next_check = now + kDeviceCheckPeriod;
      if (done()) return true;
    }
    if (bell) {
      // Read before the last look at the signal: a completion after that look has changed it,
      // and FUTEX_WAIT returns at once.
      const uint32_t rung = std::atomic_ref<uint32_t>(*bell).load(std::memory_order_acquire);
      if (done()) return true;
      const timespec ts{0, static_cast<long>(std::chrono::nanoseconds(nap).count())};
      syscall(SYS_futex, bell, FUTEX_WAIT, rung, &ts, nullptr, 0);
    } else {
      std::this_thread::sleep_for(nap);
    }
    nap = std::min(nap * 2, std::chrono::microseconds(100));
  }
}

}  // namespace

// ---- Signal ----------------------------------------------------------------------------------

Signal::Signal(int64_t initial) : mem_(aligned_zeroed(64, aql::kSignalSize)) {
  at<int64_t>(mem_, aql::kSignalKind).store(aql::kSignalKindUser);
  store(initial);
}
Signal::~Signal() { std::free(mem_); }
int64_t Signal::load() const { return at<int64_t>(mem_, aql::kSignalValue).load(std::memory_order_acquire); }
void Signal::store(int64_t v) { at<int64_t>(mem_, aql::kSignalValue).store(v, std::memory_order_release); }
// Throws simrt::Error when the GPU goes away during the wait (see check_device).
bool Signal::wait_eq(int64_t v, std::chrono::nanoseconds timeout) const {
  return wait_until([&] { return load() == v; }, timeout);
}
// The CP writes ticks of the GPU's 100 MHz timestamp counter, which counts simulated time.
uint64_t Signal::start_ts() const {
  return at<uint64_t>(mem_, aql::kSignalStartTs).load() * aql::kGpuTimestampPeriodNs;
}
uint64_t Signal::end_ts() const {
  return at<uint64_t>(mem_, aql::kSignalEndTs).load() * aql::kGpuTimestampPeriodNs;
}

// ---- Runtime ---------------------------------------------------------------------------------

Runtime::Runtime(const Options& o) {
  fd_ = ::open(o.kfd_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) fail(errno, "open " + o.kfd_path);
  try {
    kfd::kfd_ioctl_get_version_args v{};
    ioctl_retry(kfd::AMDKFD_IOC_GET_VERSION, &v, "AMDKFD_IOC_GET_VERSION");
    major_ = v.major_version;
    minor_ = v.minor_version;
    if (major_ != kfd::KFD_IOCTL_MAJOR_VERSION)
      throw Error(ENOTSUP, "KFD ioctl version " + std::to_string(major_) + "." +
                               std::to_string(minor_) + " is not 1.x");
    uint32_t want = o.gpu_id;
    if (!want) {
      if (const char* e = std::getenv("SIMRT_GPU_ID")) want = static_cast<uint32_t>(std::strtoul(e, nullptr, 0));
    }
    std::string err;
    auto node = topology::find_gpu(want, &err);
    if (!node) throw Error(ENODEV, err);
    gpu_id_ = node->gpu_id;
    properties_ = node->properties;
    auto prop = [&](const char* k, uint64_t def) {
      auto it = node->properties.find(k);
      return it == node->properties.end() ? def : it->second;
    };
    num_xcc_ = static_cast<uint32_t>(std::max<uint64_t>(prop("num_xcc", 1), 1));
    cwsr_size_ = static_cast<uint32_t>(prop("cwsr_size", 0));
    ctl_stack_size_ = static_cast<uint32_t>(prop("ctl_stack_size", 0));
    // ROCr enables the runtime before its first queue (KFD refuses it afterwards: EEXIST).
    if (minor_ >= kfd::KFD_DEBUGGER_API_MIN_MINOR) runtime_enable();
  } catch (...) {
    ::close(fd_);
    throw;
  }
  std::lock_guard lk(g_open_mu);
  g_open_fds.insert(fd_);
}

Runtime::~Runtime() {
  // As ROCr's shutdown: queues first, then the runtime disable, then the fd.
  std::vector<Queue*> qs;
  {
    std::lock_guard lk(mu_);
    qs.swap(queues_);
  }
  for (Queue* q : qs) {
    try {
      q->destroy();
    } catch (const Error&) {
      // The KFD removes the queue at exit; the Queue object only forgets its runtime.
    }
    q->rt_ = nullptr;
  }
  if (runtime_enabled_) {
    try {
      runtime_disable();
    } catch (const Error&) {
      // Nothing to report to from a destructor; the KFD drops the state at exit anyway.
    }
  }
  for (auto& [k, p] : descriptors_) std::free(p);
  if (bell_map_) {
    {
      std::lock_guard lk(g_open_mu);
      std::erase(g_bells, reinterpret_cast<uint32_t*>(static_cast<char*>(bell_map_) +
                                                           aql::kCompletionBellOffset));
    }
    munmap(bell_map_, kDoorbellFrame);
  }
  if (fd_ >= 0) {
    std::lock_guard lk(g_open_mu);
    g_open_fds.erase(fd_);
    ::close(fd_);
  }
}

long Runtime::ioctl_retry(unsigned long request, void* args, const char* what) {
  for (;;) {
    const int r = ::ioctl(fd_, request, args);
    if (r >= 0) return r;
    if (errno == EINTR) continue;
    fail(errno, what);
  }
}

void Runtime::runtime_enable() {
  kfd::kfd_ioctl_runtime_enable_args a{};
  a.r_debug = reinterpret_cast<uint64_t>(&r_debug_);
  a.mode_mask = kfd::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK | kfd::KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK;
  // Blocks while a debugger holds this process until it acknowledges (EC_PROCESS_RUNTIME).
  if (::ioctl(fd_, kfd::AMDKFD_IOC_RUNTIME_ENABLE, &a) < 0) {
    const int e = errno;
    if (e == EINTR) return runtime_enable();
    if (e != EBUSY) fail(e, "AMDKFD_IOC_RUNTIME_ENABLE");
  }
  runtime_enabled_ = true;
}

void Runtime::map_completion_bell(uint64_t doorbell_frame) {
  std::lock_guard lk(mu_);
  if (bell_map_) return;
  // A mapping of its own, which lives as long as the runtime, not as long as one queue.
  void* m = mmap(nullptr, kDoorbellFrame, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                 static_cast<off_t>(doorbell_frame));
  if (m == MAP_FAILED) return;  // waits nap instead
  bell_map_ = m;
  std::lock_guard glk(g_open_mu);
  g_bells.push_back(reinterpret_cast<uint32_t*>(static_cast<char*>(m) + aql::kCompletionBellOffset));
}

void Runtime::runtime_disable() {
  kfd::kfd_ioctl_runtime_enable_args a{};
  ioctl_retry(kfd::AMDKFD_IOC_RUNTIME_ENABLE, &a, "AMDKFD_IOC_RUNTIME_ENABLE (disable)");
  runtime_enabled_ = false;
}

uint64_t Runtime::kernel_object(const std::string& name, uint64_t wg_cost_ns, uint8_t kind) {
  std::lock_guard lk(mu_);
  auto& slot = descriptors_[{name, wg_cost_ns, kind}];
  if (!slot) {
    auto* d = static_cast<aql::KernelDescriptor*>(aligned_zeroed(64, sizeof(aql::KernelDescriptor)));
    d->magic = aql::kKernelDescriptorMagic;
    d->wg_cost_ns = wg_cost_ns;
    d->kind = kind;
    std::strncpy(d->name, name.c_str(), aql::kKernelNameMax - 1);
    slot = d;
  }
  return reinterpret_cast<uint64_t>(slot);
}

std::unique_ptr<Queue> Runtime::create_queue(uint32_t priority, uint32_t ring_packets) {
  std::unique_ptr<Queue> q(new Queue(*this, priority, ring_packets));
  std::lock_guard lk(mu_);
  queues_.push_back(q.get());
  return q;
}

// ---- Queue -----------------------------------------------------------------------------------

Queue::Queue(Runtime& rt, uint32_t priority, uint32_t ring_packets)
    : rt_(&rt), priority_(priority), slots_(ring_packets ? ring_packets : 4096) {
  if (slots_ < 16 || (slots_ & (slots_ - 1)))
    throw Error(EINVAL, "ring_packets must be a power of two >= 16, got " + std::to_string(slots_));
  if (priority > kfd::KFD_MAX_QUEUE_PRIORITY)
    throw Error(EINVAL, "queue priority must be 0..15, got " + std::to_string(priority));
  ring_ = aligned_zeroed(4096, slots_ * aql::kPacketSize);
  for (uint64_t i = 0; i < slots_; ++i)
    *reinterpret_cast<uint16_t*>(static_cast<char*>(ring_) + i * aql::kPacketSize) =
        aql::kPacketTypeInvalid;
  amd_queue_ = aligned_zeroed(64, aql::kAmdQueueSize);
  // hsa_queue_t head of amd_queue_t: type MULTI(0), features KERNEL_DISPATCH(1), base, size.
  at<uint32_t>(amd_queue_, 4).store(1);
  at<uint64_t>(amd_queue_, 8).store(reinterpret_cast<uint64_t>(ring_));
  at<uint32_t>(amd_queue_, 24).store(static_cast<uint32_t>(slots_));
  eop_ = aligned_zeroed(4096, kEopBytes);
  if (rt.cwsr_size_) {
    ctx_save_bytes_ = static_cast<std::size_t>(rt.cwsr_size_) * rt.num_xcc_;
    ctx_save_ = mmap(nullptr, ctx_save_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (ctx_save_ == MAP_FAILED) {
      ctx_save_ = nullptr;
      ctx_save_bytes_ = 0;
    }
  }
  kfd::kfd_ioctl_create_queue_args a{};
  a.ring_base_address = reinterpret_cast<uint64_t>(ring_);
  a.ring_size = static_cast<uint32_t>(slots_ * aql::kPacketSize);
  a.write_pointer_address = hwq_address() + aql::kAmdQueueWriteDispatchId;
  a.read_pointer_address = hwq_address() + aql::kAmdQueueReadDispatchId;
  a.gpu_id = rt.gpu_id_;
  a.queue_type = kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  a.queue_percentage = kfd::KFD_MAX_QUEUE_PERCENTAGE;
  a.queue_priority = priority;
  a.eop_buffer_address = reinterpret_cast<uint64_t>(eop_);
  a.eop_buffer_size = kEopBytes;
  if (ctx_save_) {
    a.ctx_save_restore_address = reinterpret_cast<uint64_t>(ctx_save_);
    a.ctx_save_restore_size = rt.cwsr_size_;
    a.ctl_stack_size = rt.ctl_stack_size_;
  }
  try {
    rt.ioctl_retry(kfd::AMDKFD_IOC_CREATE_QUEUE, &a, "AMDKFD_IOC_CREATE_QUEUE");
  } catch (...) {
    std::free(ring_);
    std::free(amd_queue_);
    std::free(eop_);
    if (ctx_save_) munmap(ctx_save_, ctx_save_bytes_);
    throw;
  }
  queue_id_ = a.queue_id;
  alive_ = true;
  at<uint64_t>(amd_queue_, 32).store(queue_id_);
  const uint64_t frame = a.doorbell_offset & ~(kDoorbellFrame - 1);
  void* m = mmap(nullptr, kDoorbellFrame, PROT_READ | PROT_WRITE, MAP_SHARED, rt.fd_,
                 static_cast<off_t>(frame));
  // Without a doorbell the CP still sees new packets through its write-pointer poll.
  if (m != MAP_FAILED) {
    rt.map_completion_bell(frame);
    doorbell_map_ = m;
    doorbell_ = reinterpret_cast<volatile uint64_t*>(static_cast<char*>(m) +
                                                     (a.doorbell_offset & (kDoorbellFrame - 1)));
  }
}

Queue::~Queue() {
  try {
    destroy();
  } catch (const Error&) {
    // The queue stays with the KFD until the process exits; nothing else can be done here.
  }
  if (rt_) {
    std::lock_guard lk(rt_->mu_);
    std::erase(rt_->queues_, this);
  }
  if (doorbell_map_) munmap(doorbell_map_, kDoorbellFrame);
  std::free(ring_);
  std::free(amd_queue_);
  std::free(eop_);
  if (ctx_save_) munmap(ctx_save_, ctx_save_bytes_);
}

void Queue::destroy() {
  std::lock_guard lk(mu_);
  if (!alive_ || !rt_) return;
  kfd::kfd_ioctl_destroy_queue_args a{};
  a.queue_id = queue_id_;
  rt_->ioctl_retry(kfd::AMDKFD_IOC_DESTROY_QUEUE, &a, "AMDKFD_IOC_DESTROY_QUEUE");
  alive_ = false;
}

uint64_t Queue::write_index() const {
  return at<uint64_t>(amd_queue_, aql::kAmdQueueWriteDispatchId).load(std::memory_order_acquire);
}
uint64_t Queue::read_index() const {
  return at<uint64_t>(amd_queue_, aql::kAmdQueueReadDispatchId).load(std::memory_order_acquire);
}

void* Queue::reserve_slot(uint64_t& index) {
  if (!alive_ || !rt_) throw Error(EINVAL, "queue " + std::to_string(queue_id_) + " was destroyed");
  index = write_index();
  // Ring full: wait for the CP to consume (read_dispatch_id moves on completion).
  wait_until([&] { return index - read_index() < slots_; }, std::chrono::nanoseconds::max());
  return static_cast<char*>(ring_) + (index % slots_) * aql::kPacketSize;
}

void Queue::publish(void* slot, uint16_t header, uint64_t index) {
  // Header and setup form the packet's first 32 bits: stored last, with release order, so the
  // CP never sees a valid header in front of a half-written body.
  uint32_t setup = 0;
  std::memcpy(&setup, static_cast<char*>(slot) + 2, sizeof(uint16_t));
  std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(slot))
      .store(header | (setup << 16), std::memory_order_release);
  at<uint64_t>(amd_queue_, aql::kAmdQueueWriteDispatchId).store(index + 1, std::memory_order_release);
  if (doorbell_) {
    *doorbell_ = index;
    // A GPU sees a doorbell write as it happens; the simulated one would see it only at its next
    // write-pointer poll (up to 250 µs later). The doorbell page is memory kfdsimd maps too, so a
    // wake of its futex (the doorbell's low half) reaches the daemon's doorbell watcher at once.
    // Where nobody waits it costs one system call; on a real GPU's doorbell it fails (EFAULT).
    syscall(SYS_futex, const_cast<uint64_t*>(doorbell_), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  }
}

void Queue::dispatch(const Kernel& k, Signal* done) {
  if (!rt_) throw Error(EINVAL, "queue " + std::to_string(queue_id_) + ": its runtime was closed");
  const uint64_t object = rt_->kernel_object(k.name, k.wg_cost_ns, k.kind);
  std::lock_guard lk(mu_);
  uint64_t index = 0;
  void* slot = reserve_slot(index);
  aql::KernelDispatchPacket p{};
  uint32_t dims = 1;
  if (k.grid[2] > 1 || k.workgroup[2] > 1) dims = 3;
  else if (k.grid[1] > 1 || k.workgroup[1] > 1) dims = 2;
  p.setup = static_cast<uint16_t>(dims);
  p.workgroup_size_x = std::max<uint16_t>(k.workgroup[0], 1);
  p.workgroup_size_y = std::max<uint16_t>(k.workgroup[1], 1);
  p.workgroup_size_z = std::max<uint16_t>(k.workgroup[2], 1);
  p.grid_size_x = std::max<uint32_t>(k.grid[0], 1);
  p.grid_size_y = std::max<uint32_t>(k.grid[1], 1);
  p.grid_size_z = std::max<uint32_t>(k.grid[2], 1);
  p.kernel_object = object;
  p.completion_signal = done ? done->handle() : 0;
  // Everything but the 32-bit header+setup word, which publish() stores last.
  std::memcpy(static_cast<char*>(slot) + 4, reinterpret_cast<const char*>(&p) + 4, sizeof p - 4);
  std::memcpy(static_cast<char*>(slot) + 2, &p.setup, sizeof p.setup);
  const uint16_t header = static_cast<uint16_t>(
      (aql::kPacketTypeKernelDispatch << aql::kHeaderType) | (1u << aql::kHeaderBarrier) |
      (aql::kFenceScopeSystem << aql::kHeaderAcquireFenceScope) |
      (aql::kFenceScopeSystem << aql::kHeaderReleaseFenceScope));
  publish(slot, header, index);
}

void Queue::barrier_and(std::span<Signal* const> deps, Signal* done) {
  if (deps.size() > 5) throw Error(EINVAL, "a barrier-AND packet takes at most 5 signals");
  std::lock_guard lk(mu_);
  uint64_t index = 0;
  void* slot = reserve_slot(index);
  aql::BarrierAndPacket b{};
  for (std::size_t i = 0; i < deps.size(); ++i) b.dep_signal[i] = deps[i] ? deps[i]->handle() : 0;
  b.completion_signal = done ? done->handle() : 0;
  std::memcpy(static_cast<char*>(slot) + 4, reinterpret_cast<const char*>(&b) + 4, sizeof b - 4);
  std::memset(static_cast<char*>(slot) + 2, 0, 2);
  const uint16_t header = static_cast<uint16_t>(
      (aql::kPacketTypeBarrierAnd << aql::kHeaderType) | (1u << aql::kHeaderBarrier) |
      (aql::kFenceScopeSystem << aql::kHeaderAcquireFenceScope) |
      (aql::kFenceScopeSystem << aql::kHeaderReleaseFenceScope));
  publish(slot, header, index);
}

}  // namespace simrt
