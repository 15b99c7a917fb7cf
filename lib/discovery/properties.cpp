#include "discovery/properties.h"

#include "discovery/text_scan.h"

namespace gpreempt::discovery {

std::optional<std::string> gfx_target_name(std::uint64_t v) {
  if (v == 0) return std::nullopt;
  const std::uint64_t major = v / 10000, minor = (v / 100) % 100, stepping = v % 100;
  if (minor > 15 || stepping > 15) return std::nullopt;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "gfx" + std::to_string(major);
  s += kHex[minor];
  s += kHex[stepping];
  return s;
}

TopologyProperties decode_properties(std::string_view text, std::string_view display_name) {
  TopologyProperties out;
  DiagnosticSink diag{std::string(display_name)};
  detail::LineReader lines(text);
  std::string_view line;
  while (lines.next(line)) {
    std::string_view t = detail::trim(line);
    if (t.empty()) continue;
    const std::size_t sp = t.find_first_of(" \t");
    std::optional<std::uint64_t> value;
    std::string_view key;
    if (sp != std::string_view::npos) {
      key = t.substr(0, sp);
      value = detail::parse_number(detail::trim(t.substr(sp)));
    }
    if (!value) {
      diag.add(lines.line_number(),
               "expected \"<key> <unsigned integer>\", got \"" + std::string(t) + "\"");
      out.complete = false;
      continue;
    }
    if (out.properties.count(std::string(key)))
      diag.add(lines.line_number(), "key \"" + std::string(key) + "\" repeated; the last value wins");
    out.properties[std::string(key)] = *value;
  }
  if (!lines.ended_with_newline() && !text.empty()) {
    diag.add(lines.line_number(), "file ends without a newline: the last line may be cut short");
    out.complete = false;
  }
  auto get = [&](const char* k) -> std::optional<std::uint64_t> {
    auto it = out.properties.find(k);
    if (it == out.properties.end()) return std::nullopt;
    return it->second;
  };
  const auto simd = get("simd_count");
  if (!simd) {
    diag.add(0, "no simd_count key: cannot tell a GPU node from a CPU node");
    out.complete = false;
  }
  out.gpu = simd.value_or(0) > 0;
  if (out.gpu) {
    if (auto per_cu = get("simd_per_cu"); per_cu && *per_cu > 0) out.compute_units = *simd / *per_cu;
  }
  if (auto g = get("gfx_target_version")) out.gfx_target = gfx_target_name(*g);
  out.num_xcc = get("num_xcc");
  out.diagnostics = diag.take();
  return out;
}

}  // namespace gpreempt::discovery
