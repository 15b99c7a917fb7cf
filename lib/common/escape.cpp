#include "common/escape.h"

#include <algorithm>

namespace gpreempt {

namespace {

// The escape for byte `c`, or an empty view when it stands as itself; `buf` holds \xNN forms.
std::string_view escape_of(unsigned char c, EscapeStyle style, char (&buf)[4]) {
  if (style == EscapeStyle::kPrintableAscii) {
    switch (c) {
      case '\0': return "\\0";
      case '\t': return "\\t";
      case '\r': return "\\r";
      case '\n': return "\\n";
      case '\\': return "\\\\";
      case '"': return "\\\"";
      default: break;
    }
    if (c >= 0x20 && c < 0x7f) return {};
  } else if (c >= 0x20 && c != 0x7f) {
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  buf[0] = '\\';
  buf[1] = 'x';
  buf[2] = kHex[c >> 4];
  buf[3] = kHex[c & 0xf];
  return {buf, 4};
}

}  // namespace

Escaped escape(std::string_view raw, EscapeStyle style, EscapeLimits limits) {
  Escaped out;
  const std::size_t n = std::min(raw.size(), limits.max_input);
  out.text.reserve(std::min(n, limits.max_output));
  std::size_t i = 0;
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    char buf[4];
    const std::string_view esc = escape_of(c, style, buf);
    const std::size_t cost = esc.empty() ? 1 : esc.size();
    if (out.text.size() + cost > limits.max_output) break;
    if (esc.empty())
      out.text += static_cast<char>(c);
    else
      out.text += esc;
  }
  out.consumed = i;
  return out;
}

}  // namespace gpreempt
