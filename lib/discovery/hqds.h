// Decoder for debugfs `hqds` (docs/kfd-interface.md#hqds): per GPU node, the hardware queue slots
// KFD owns (HIQ, CP compute slots, SDMA RLC queues) with their register dumps. Slots are hardware,
// not processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text_file.h"
#include "discovery/diagnostics.h"
#include "discovery/input_kind.h"
#include "discovery/mqd_fields.h"

namespace gpreempt::discovery {

struct HqdSlot {
  std::string kind;        // "HIQ", "CP" or "SDMA"
  std::uint32_t xcc = 0;   // "Inst N" (0 on kernels that print no instance)
  std::uint32_t mec = 0;   // HIQ only
  std::uint32_t pipe = 0;  // CP/HIQ pipe; SDMA engine
  std::uint32_t queue = 0; // CP/HIQ queue; SDMA RLC
  std::size_t line = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> registers;  // (byte address, value)
  std::optional<bool> active;               // CP/HIQ: CP_HQD_ACTIVE (register index 2)
  std::optional<QueueDescriptor> decoded;   // CP slots that are active; HIQ always
  bool complete = true;
};

struct HqdsNode {
  std::uint32_t node = 0;
  std::uint32_t gpu_id = 0;
  std::string gpu_id_hex;
  std::size_t line = 0;
  bool stopped = false;  // " Device is stopped"
  std::vector<HqdSlot> slots;
};

struct HqdsDump {
  std::vector<HqdsNode> nodes;
  bool complete = true;
  std::vector<Diagnostic> diagnostics;
  // Set when the input is another kind of file (then nothing else is: one diagnostic says so).
  std::optional<InputKind> looks_like;
};

// Bounds that keep memory independent of the input size: a slot dumps kRegisterCount (56)
// registers, SDMA slots a few dozen, so registers past kMaxHqdRegisters are reported and dropped;
// decoding stops with a diagnostic after kMaxHqdsSlots slot headers or kMaxHqdsNodes node headers
// (a node has a few hundred slots at most).
inline constexpr std::size_t kMaxHqdRegisters = 256;
inline constexpr std::size_t kMaxHqdsSlots = 65536;
inline constexpr std::size_t kMaxHqdsNodes = 1024;

HqdsDump decode_hqds(LineSource& lines, std::string_view display_name);
HqdsDump decode_hqds(std::string_view text, std::string_view display_name);

// "Node %u, gpu_id %x:" (shared with `rls`); false when the line is not such a header.
bool parse_node_header(std::string_view trimmed, std::uint32_t& node, std::uint32_t& gpu_id,
                       std::string& gpu_id_hex);

}  // namespace gpreempt::discovery
