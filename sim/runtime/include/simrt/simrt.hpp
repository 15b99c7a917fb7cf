// simrt's C++ API (the C API in simrt.h wraps this). Errors throw simrt::Error, which is
// gpreempt::Error (common/error.h): errno + text.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.h"

namespace simrt {

// The project's one error type (errno + text), as everywhere else.
using Error = gpreempt::Error;

struct Kernel {
  std::string name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint16_t, 3> workgroup{1, 1, 1};
  uint64_t wg_cost_ns = 1000;
  // Register model of the kernel (aql.h KernelDescriptor::kind): 0 generic, 1 matrix, 2 vector.
  uint8_t kind = 0;
};

struct Options {
  std::string kfd_path = "/dev/kfd";
  uint32_t gpu_id = 0;  // 0: $SIMRT_GPU_ID, else the first GPU node of the topology
};

class Runtime;

// An amd_signal_t in this process's memory: the command processor decrements `value`.
class Signal {
 public:
  explicit Signal(int64_t initial);
  ~Signal();
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  int64_t load() const;
  void store(int64_t v);
  // true once value == v; false on timeout. Throws Error when the GPU goes away meanwhile (the
  // device of an open Runtime stops answering, e.g. the simulator's kfdsimd died).
  bool wait_eq(int64_t v, std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max()) const;
  uint64_t handle() const { return reinterpret_cast<uint64_t>(mem_); }
  // When the CP started and finished the last packet, in simulated ns (10 ns resolution: the
  // signal holds ticks of the GPU's 100 MHz timestamp counter).
  uint64_t start_ts() const;
  uint64_t end_ts() const;

 private:
  void* mem_;
};

class Queue {
 public:
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  uint32_t id() const { return queue_id_; }
  uint32_t priority() const { return priority_; }
  uint64_t hwq_address() const { return reinterpret_cast<uint64_t>(amd_queue_); }
  uint64_t ring_address() const { return reinterpret_cast<uint64_t>(ring_); }
  uint64_t ring_packets() const { return slots_; }
  // Kernel dispatch packet with the barrier bit (in-order); `done` may be null.
  void dispatch(const Kernel& k, Signal* done = nullptr);
  // Barrier-AND on up to 5 signals.
  void barrier_and(std::span<Signal* const> deps, Signal* done = nullptr);
  uint64_t write_index() const;
  uint64_t read_index() const;
  // KFD DESTROY_QUEUE (also done by the destructor, or by the Runtime's destructor for queues
  // still alive then); blocks while the queue is suspended.
  void destroy();

 private:
  friend class Runtime;
  Queue(Runtime& rt, uint32_t priority, uint32_t ring_packets);
  void* reserve_slot(uint64_t& index);
  void publish(void* slot, uint16_t header, uint64_t index);

  Runtime* rt_;  // null once the runtime is gone
  uint32_t priority_;
  uint32_t queue_id_ = 0;
  bool alive_ = false;
  uint64_t slots_;
  void* ring_ = nullptr;
  void* amd_queue_ = nullptr;
  void* eop_ = nullptr;
  void* ctx_save_ = nullptr;
  std::size_t ctx_save_bytes_ = 0;
  volatile uint64_t* doorbell_ = nullptr;
  void* doorbell_map_ = nullptr;
  std::mutex mu_;
};

class Runtime {
 public:
  explicit Runtime(const Options& o = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  uint32_t gpu_id() const { return gpu_id_; }
  uint32_t kfd_major() const { return major_; }
  uint32_t kfd_minor() const { return minor_; }
  int fd() const { return fd_; }
  // The GPU node's topology properties (simd_count, num_xcc, max_engine_clk_fcompute, …).
  const std::map<std::string, uint64_t>& node_properties() const { return properties_; }

  std::unique_ptr<Queue> create_queue(uint32_t priority = 7, uint32_t ring_packets = 4096);

  // The descriptor `kernel_object` points at, one per (name, cost, kind), alive as long as the
  // runtime.
  uint64_t kernel_object(const std::string& name, uint64_t wg_cost_ns, uint8_t kind = 0);

 private:
  friend class Queue;
  long ioctl_retry(unsigned long request, void* args, const char* what);
  void runtime_enable();
  void runtime_disable();
  void map_completion_bell(uint64_t doorbell_frame);

  int fd_ = -1;
  uint32_t gpu_id_ = 0;
  uint32_t major_ = 0, minor_ = 0;
  uint32_t num_xcc_ = 1;
  uint32_t cwsr_size_ = 0, ctl_stack_size_ = 0;
  std::map<std::string, uint64_t> properties_;
  bool runtime_enabled_ = false;
  std::mutex mu_;
  std::map<std::tuple<std::string, uint64_t, uint8_t>, void*> descriptors_;
  std::vector<Queue*> queues_;  // alive, destroyed before the runtime is disabled
  char r_debug_[64] = {};  // stands in for ROCr's _r_debug, whose address RUNTIME_ENABLE carries
  void* bell_map_ = nullptr;  // the doorbell frame, mapped for its completion bell (sim/gpu/aql.h)
};

}  // namespace simrt
