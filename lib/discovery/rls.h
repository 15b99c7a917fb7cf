// Decoder for debugfs `rls` (docs/kfd-interface.md#rls): per GPU node, the hardware scheduler's
// current runlist indirect buffer, split into PM4 type-3 packets (layouts in pm4_packets.h).
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

namespace gpreempt::discovery {

struct Pm4Field {
  std::string name;
  std::uint64_t value = 0;
  bool address = false;  // printed as "0x…"
};

struct Pm4Packet {
  std::size_t dword_offset = 0;  // from the start of the runlist IB
  std::size_t line = 0;          // dump line holding the header
  std::uint32_t header = 0;
  std::uint32_t opcode = 0;
  std::string opcode_name;       // "MAP_PROCESS", …; "0x%02x" for opcodes outside the HWS set
  std::size_t dwords = 0;        // total, header included
  std::vector<std::uint32_t> raw;
  std::vector<Pm4Field> fields;  // decoded per opcode, in layout order
  bool complete = true;          // false when the dump ends inside the packet

  std::optional<std::uint64_t> field(std::string_view name) const;
};

struct RlsNode {
  std::uint32_t node = 0;
  std::uint32_t gpu_id = 0;
  std::string gpu_id_hex;
  std::size_t line = 0;
  bool active_runlist = false;   // false for "No active runlist"
  std::size_t ib_dwords = 0;
  std::vector<Pm4Packet> packets;
  std::size_t padding_dwords = 0;  // trailing zero dwords after the last packet
  bool complete = true;
};

struct RlsDump {
  std::vector<RlsNode> nodes;
  bool complete = true;
  std::vector<Diagnostic> diagnostics;
  // Set when the input is another kind of file (then nothing else is: one diagnostic says so).
  std::optional<InputKind> looks_like;
};

// Bounds that keep memory independent of the input size: decoding stops with a diagnostic after
// kMaxRlsDwords runlist dwords in all (real runlists are a few KiB) or kMaxRlsNodes node headers.
inline constexpr std::size_t kMaxRlsDwords = std::size_t{1} << 18;
inline constexpr std::size_t kMaxRlsNodes = 1024;

RlsDump decode_rls(LineSource& lines, std::string_view display_name);
RlsDump decode_rls(std::string_view text, std::string_view display_name);

// Decodes one packet's fields from its dwords (header first); exposed for the simulator's tests.
std::vector<Pm4Field> decode_pm4_fields(std::uint32_t opcode, const std::vector<std::uint32_t>& dw);

}  // namespace gpreempt::discovery
