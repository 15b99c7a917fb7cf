// What the driver and the firmware put in a queue's descriptors and hardware slots, as the
// simulated debugfs shows them: GFX9 compute MQDs (one per XCC), v9 SDMA MQDs, the 56-register HQD
// window of a mapped / idle CP slot, the HIQ, SDMA RLC register blocks, and the runlist IB. Values
// follow docs/kfd-interface.md#gfx9-mqd and the MI308X captures (docs/sim-device-profiles.md).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "device_profile.h"
#include "device_state.h"

namespace gpreempt::sim::detail {

// Process doorbell frames start at dword 0x1000 of the doorbell BAR (realdata 01/03: queue id q
// of the first process rings dword 0x1000 + 2q), one 2-page frame (0x800 dwords) per process.
uint32_t doorbell_dword_offset(const Process& p, const Queue& q);

std::array<uint32_t, 512> build_compute_mqd(const DeviceProfile& prof, const Process& p,
                                            const Queue& q, uint32_t xcc);
std::array<uint32_t, 128> build_sdma_mqd(const DeviceProfile& prof, const Process& p,
                                         const Queue& q);

// HQD window (MQD dwords 128..183) of a CP slot.
std::array<uint32_t, 56> mapped_hqd_registers(const DeviceProfile& prof, const Process& p,
                                              const Queue& q, uint32_t xcc, uint32_t vmid);
std::array<uint32_t, 56> idle_hqd_registers();
std::array<uint32_t, 56> hiq_registers(uint32_t xcc);

// An SDMA RLC register block (four register runs) at `base`; `q` null = idle slot.
std::vector<std::pair<uint32_t, uint32_t>> sdma_rlc_registers(uint32_t base,
                                                              const DeviceProfile& prof,
                                                              const Process* p, const Queue* q,
                                                              uint32_t vmid);

// One process of a device's runlist: its active queues in process list order.
struct RunlistEntry {
  const Process* process = nullptr;
  std::vector<const Queue*> queues;
  uint32_t queue_count = 0;  // every queue of the process on this device (MAP_PROCESS num_queues)
};

// The runlist IB pm_create_runlist_ib() builds: per process MAP_PROCESS (Aldebaran layout, used
// on GFX 9.4.2 and 9.4.3) then MAP_QUEUES per active queue; a chained RUN_LIST when
// over-subscribed.
std::vector<uint32_t> build_runlist_ib(const DeviceProfile& prof,
                                       const std::vector<RunlistEntry>& runlist,
                                       uint64_t ib_gpu_addr);

}  // namespace gpreempt::sim::detail
