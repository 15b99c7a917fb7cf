// Decoder for debugfs `mqds` (docs/kfd-interface.md#mqds): per KFD process, its user queues and
// their MQDs, one MQD copy per XCC on multi-XCC GPUs. Text in, values out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/text_file.h"
#include "discovery/diagnostics.h"
#include "discovery/input_kind.h"
#include "discovery/mqd_fields.h"

namespace gpreempt::discovery {

struct MqdCopy {
  std::uint32_t xcc = 0;  // position of the copy in the dump (= XCC instance)
  std::size_t bytes = 0;  // bytes dumped for this copy
  std::vector<std::uint32_t> dwords;
  QueueDescriptor compute;              // valid for compute queues
  std::optional<SdmaDescriptor> sdma;   // set for SDMA queues
  bool complete = false;                // exactly one GFX9 MQD of the expected size
};

struct MqdsQueue {
  // "compute", "sdma", "diq" (older kernels' kernel debug queue) or "unknown" (bad user type).
  std::string type;
  std::optional<int> raw_type;  // the number printed by "bad user queue type %d"
  std::uint32_t gpu_id = 0;
  std::string gpu_id_hex;       // as printed, e.g. "f7bc"
  std::size_t line = 0;         // line of the queue header
  std::vector<MqdCopy> xcc_copies;
  bool complete = true;         // false when its dump is cut short or malformed
};

struct MqdsProcess {
  int pid = 0;
  std::uint32_t pasid = 0;
  bool pasid_printed_hex = false;  // older mainline prints "PASID 0x%x"
  std::size_t line = 0;
  std::vector<MqdsQueue> queues;   // in file order = newest first
};

struct MqdsDump {
  std::vector<MqdsProcess> processes;
  bool complete = true;
  std::vector<Diagnostic> diagnostics;
  // Set when the input is another kind of file (then nothing else is: one diagnostic says so).
  std::optional<InputKind> looks_like;
};

// Bounds that keep memory independent of the input size: no GPU has more XCCs than
// kMaxMqdCopies, and decoding stops with a diagnostic after kMaxMqdsQueues queue headers or
// kMaxMqdsProcesses process headers (far beyond what KFD's per-process limits let a node hold).
// Dump rows past the size of an MQD are reported, not stored.
inline constexpr std::size_t kMaxMqdCopies = 16;
inline constexpr std::size_t kMaxMqdsQueues = 8192;
inline constexpr std::size_t kMaxMqdsProcesses = 8192;

MqdsDump decode_mqds(LineSource& lines, std::string_view display_name);
MqdsDump decode_mqds(std::string_view text, std::string_view display_name);

}  // namespace gpreempt::discovery
