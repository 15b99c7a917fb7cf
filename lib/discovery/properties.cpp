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

namespace {
bool key_shaped(std::string_view k) {
  if (k.empty() || k.size() > kMaxPropertyKeyBytes) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}
}  // namespace

TopologyProperties decode_properties(LineSource& lines, std::string_view display_name) {
  TopologyProperties out;
  DiagnosticSink diag{std::string(display_name)};
  bool key_limit_reported = false;
  auto other = detail::for_each_line(lines, InputKind::properties, [&](std::string_view line, bool cut) {
    if (cut) {
      diag.add(lines.line_number(), detail::too_long_message(line, lines.max_line(), "a properties file"));
      out.complete = false;
      return true;
    }
    std::string_view t = detail::trim(line);
    if (t.empty()) return true;
    const std::size_t sp = t.find_first_of(" \t");
    std::optional<std::uint64_t> value;
    std::string_view key;
    if (sp != std::string_view::npos) {
      key = t.substr(0, sp);
      if (key_shaped(key)) value = detail::parse_number(detail::trim(t.substr(sp)));
    }
    if (!value) {
      diag.add(lines.line_number(), "expected \"<key> <unsigned integer>\", got " + quote_line(t));
      out.complete = false;
      return true;
    }
    auto it = out.properties.find(std::string(key));
    if (it != out.properties.end()) {
      diag.add(lines.line_number(), "key \"" + std::string(key) + "\" repeated; the last value wins");
      it->second = *value;
      return true;
    }
    if (out.properties.size() >= kMaxPropertyKeys) {
      if (!key_limit_reported)
        diag.add(lines.line_number(), "more than " + std::to_string(kMaxPropertyKeys) +
                                          " keys (a KFD properties file has about 70): further keys ignored");
      key_limit_reported = true;
      out.complete = false;
      return true;
    }
    out.properties.emplace(std::string(key), *value);
    return true;
  });
  if (other) {
    TopologyProperties wrong;
    wrong.complete = false;
    wrong.looks_like = *other;
    wrong.diagnostics = {{std::string(display_name), 0,
                          wrong_kind_message(*other, InputKind::properties, display_name)}};
    return wrong;
  }
  if (!lines.ended_with_newline()) {
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

TopologyProperties decode_properties(std::string_view text, std::string_view display_name) {
  TextLines lines(text);
  return decode_properties(lines, display_name);
}

}  // namespace gpreempt::discovery
