// How the simulated command processor reaches the rings, queue structs and signals that live in
// workload processes. The daemon backs it with HostEnv (process_vm_readv/writev); tests may use
// their own address space or a fake.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/device/kfd_device.h"

namespace gpreempt::sim::gpu {

class ProcessMemory {
 public:
  virtual ~ProcessMemory() = default;
  virtual bool read(int pid, uint64_t addr, void* dst, std::size_t len) = 0;
  virtual bool write(int pid, uint64_t addr, const void* src, std::size_t len) = 0;
};

class HostEnvMemory final : public ProcessMemory {
 public:
  explicit HostEnvMemory(HostEnv& env) : env_(env) {}
  bool read(int pid, uint64_t addr, void* dst, std::size_t len) override {
    return env_.read_memory(pid, addr, dst, len);
  }
  bool write(int pid, uint64_t addr, const void* src, std::size_t len) override {
    return env_.write_memory(pid, addr, src, len);
  }

 private:
  HostEnv& env_;
};

// process_vm_readv/writev on any pid (the calling process included).
class ProcessVmMemory final : public ProcessMemory {
 public:
  bool read(int pid, uint64_t addr, void* dst, std::size_t len) override;
  bool write(int pid, uint64_t addr, const void* src, std::size_t len) override;
};

}  // namespace gpreempt::sim::gpu
