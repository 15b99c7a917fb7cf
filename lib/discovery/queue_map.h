// The cross-source queue map (docs/kfd-interface.md#joining-queues-across-sources): one row per KFD
// queue, joining per-process queue lists (sysfs / GET_QUEUE_SNAPSHOT), debugfs MQDs, HQD slots, the
// runlist, and the HIP runtime's HWq addresses on MQD base, ring base and read-pointer address (HWq
// + 0x80). Pure: values in, rows out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "discovery/hqds.h"
#include "discovery/mqds.h"
#include "discovery/rls.h"

namespace gpreempt::discovery {

// A queue known by id: from /sys/class/kfd/kfd/proc/<pid>/queues (no addresses) or from a queue
// snapshot taken while attached (addresses present).
struct KnownQueue {
  int pid = 0;
  std::uint32_t queue_id = 0;
  std::uint32_t gpu_id = 0;
  std::string type;                        // "compute", "sdma", "sdma_xgmi", …
  std::optional<std::uint64_t> ring_base;  // snapshot only
  std::optional<std::uint64_t> ring_size;
  std::optional<std::uint64_t> rptr_address;
  std::optional<std::uint64_t> wptr_address;
  std::string source;                      // "sysfs" or "snapshot"
};

// A HIP runtime hardware queue seen in an AMD_LOG_LEVEL log.
struct LogHwQueue {
  std::uint64_t address = 0;  // HWq= (address of ROCr's amd_queue_t)
  std::optional<int> pid;
};

struct HwSlot {
  std::uint32_t xcc = 0;
  std::uint32_t pipe = 0;
  std::uint32_t queue = 0;
  bool active = false;
};

struct QueueMapRow {
  std::optional<int> pid;
  std::optional<std::uint32_t> queue_id;
  // true when the id (or its association with these addresses) comes from creation order in
  // debugfs rather than from sysfs/snapshot matched on an address.
  bool queue_id_inferred = false;
  std::uint32_t gpu_id = 0;
  std::string type;
  std::optional<std::uint64_t> ring_base;
  std::optional<std::uint64_t> ring_size;
  std::optional<std::uint64_t> rptr_address;
  std::optional<std::uint64_t> wptr_address;
  std::optional<std::uint32_t> pipe_priority;
  std::optional<std::uint32_t> queue_priority;
  std::vector<std::uint64_t> mqd_bases;  // one per XCC copy
  std::vector<HwSlot> hw_slots;
  std::optional<bool> in_runlist;        // set when a runlist was given
  std::optional<std::uint32_t> doorbell_offset;
  std::vector<std::uint64_t> hwq;        // log HWq addresses whose +0x80 is this rptr address
  std::vector<std::string> sources;      // "sysfs", "snapshot", "mqds", "hqds", "rls", "log"
};

struct QueueMapInputs {
  std::vector<KnownQueue> known;
  const MqdsDump* mqds = nullptr;
  const HqdsDump* hqds = nullptr;
  const RlsDump* rls = nullptr;
  std::vector<LogHwQueue> log_queues;
  std::optional<int> pid;  // keep only this process's rows
};

struct QueueMap {
  std::vector<QueueMapRow> queues;
  std::vector<std::string> notes;  // how ids were obtained, unmatched log queues, …
};

QueueMap build_queue_map(const QueueMapInputs& in);

}  // namespace gpreempt::discovery
