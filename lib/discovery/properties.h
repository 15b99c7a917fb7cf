// Decoder for a KFD topology node's `properties` file (docs/kfd-interface.md#topology):
// "<key> <value>" lines, parsed by key because older kernels lack keys and order differs between
// versions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/text_file.h"
#include "discovery/diagnostics.h"
#include "discovery/input_kind.h"

namespace gpreempt::discovery {

struct TopologyProperties {
  std::map<std::string, std::uint64_t> properties;  // every key seen, in key order
  bool gpu = false;                                  // simd_count > 0
  std::optional<std::uint64_t> compute_units;        // simd_count / simd_per_cu, GPUs only
  std::optional<std::string> gfx_target;             // "gfx942", "gfx90a"; from gfx_target_version
  std::optional<std::uint64_t> num_xcc;
  bool complete = true;
  std::vector<Diagnostic> diagnostics;
  // Set when the input is another kind of file (then nothing else is: one diagnostic says so).
  std::optional<InputKind> looks_like;
};

// Memory is bounded whatever the input: keys longer than kMaxKeyBytes are malformed lines, and
// keys after the first kMaxKeys distinct ones are reported once and dropped (kernels print ~70).
inline constexpr std::size_t kMaxPropertyKeyBytes = 64;
inline constexpr std::size_t kMaxPropertyKeys = 512;

TopologyProperties decode_properties(LineSource& lines, std::string_view display_name);
TopologyProperties decode_properties(std::string_view text, std::string_view display_name);

// gfx_target_version = major*10000 + minor*100 + stepping; minor and stepping print as one hex
// digit each (90010 -> "gfx90a"). nullopt for 0 (CPU nodes) or values that do not fit that form.
std::optional<std::string> gfx_target_name(std::uint64_t gfx_target_version);

}  // namespace gpreempt::discovery
