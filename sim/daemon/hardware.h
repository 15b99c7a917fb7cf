// What kfdsimd drives besides the KFD state machine: the GPU behind it.
//
// The daemon's single-threaded loop owns one Hardware. The KFD state machine talks to it through
// `hws()` (runlist changes, sim/device/kfd_device.h); the loop hands it the two things only the
// transport sees:
//  * doorbell pages — every mmap of a doorbell offset of /dev/kfd is backed by a memfd the daemon
//    maps too; the pointer is handed over here, so the model reads doorbell writes as plain memory;
//  * time — the loop arms a timer for `next_tick()` and calls `tick()` when it fires (and after
//    every request it served, so the model can react to new queues and doorbells at once).
// The GPU model (sim/gpu) implements this interface; sim/daemon/hardware_factory.cpp is the only
// place that chooses the implementation for a profile.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/device/kfd_device.h"

namespace gpreempt::sim {
struct DeviceProfile;
}

namespace gpreempt::sim::daemon {

using Clock = std::chrono::steady_clock;

class Hardware {
 public:
  virtual ~Hardware() = default;
  // The hardware scheduler the KfdDevice is built with (shared: both hold it).
  virtual std::shared_ptr<Hws> hws() = 0;
  // Process `pid` mapped the doorbell page(s) of `gpu_id`: `bytes` bytes at `page`, shared with
  // the process. Valid until doorbell_unmapped (the process is gone) or the Hardware is destroyed.
  virtual void doorbell_mapped(int /*pid*/, uint32_t /*gpu_id*/, volatile void* /*page*/,
                               std::size_t /*bytes*/) {}
  virtual void doorbell_unmapped(int /*pid*/, uint32_t /*gpu_id*/) {}
  // A descriptor the loop watches besides its timer: readable when the model wants a tick now (a
  // doorbell rang), -1 when it has none. The loop calls woken() and then tick().
  virtual int wake_fd() const { return -1; }
  virtual void woken() {}
  // The next instant the model wants `tick`, or nullopt when it has nothing to do.
  virtual std::optional<Clock::time_point> next_tick() { return std::nullopt; }
  virtual void tick(Clock::time_point /*now*/) {}
  // Processes whose event-page slots the model wrote (interrupt signals) since the last call: the
  // loop hands each to KfdDevice::event_interrupt after a tick.
  virtual std::vector<int> take_event_interrupts() { return {}; }
  // Whether tick() may change the device's state (by completing runlist changes through Hws
  // callbacks). The daemon re-renders the machine's files only after something could have changed.
  virtual bool ticks_change_state() const { return true; }
  // The KfdDevice exists now (constructed with hws()); the model may read its queues from here on.
  virtual void attach(const KfdDevice& /*device*/) {}
  // What the model recorded (protocol Op::kGpuStats: runlist records with seq > since_seq, at most
  // max_records per GPU), as JSON text; nullopt when this hardware records nothing. Answered from
  // memory, in the loop, so a client that just got its ioctl's answer sees that ioctl's record.
  virtual std::optional<std::string> stats_json(uint64_t /*since_seq*/, std::size_t /*max_records*/) const {
    return std::nullopt;
  }
  // The daemon leaves its loop: leave what the model recorded where it can be read afterwards.
  // Nothing the model does while running touches the file system: a write that the kernel
  // throttles under another process's I/O would freeze the simulated GPU for as long.
  virtual void stopping() {}
};

struct HardwareOptions {
  std::string model;        // "gpu" (default): sim/gpu timing model; "instant": runlist changes complete at once, no execution
  std::string machine_dir;  // the machine's directory (models put their files there)
};

// The composition point: which hardware model a machine with `profile` gets.
// Throws std::invalid_argument for an unknown model name.
std::unique_ptr<Hardware> make_hardware(const DeviceProfile& profile, const HardwareOptions& options);

}  // namespace gpreempt::sim::daemon
