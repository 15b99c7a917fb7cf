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

void append_hex(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

// The length (2..4) of the well-formed UTF-8 sequence at s[i] and its code point; 0 when the
// bytes there are not one (overlong, surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (c >= 0xf5) len = 0;
  if (len == 0 || i + len > s.size()) return 0;
  cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

// Code points that change how a terminal or a reader takes the text around them.
bool hidden_control(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

Escaped escape_terminal_text(std::string_view raw, EscapeLimits limits) {
  Escaped out;
  const std::string_view s = raw.substr(0, std::min(raw.size(), limits.max_input));
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::string piece;
    std::size_t len = 1;
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        append_hex(piece, c);
      else if (c == '\\')
        piece = "\\\\";
      else
        piece = static_cast<char>(c);
    } else {
      char32_t cp = 0;
      len = utf8_sequence(s, i, cp);
      if (len == 0) {
        len = 1;
        append_hex(piece, c);
      } else if (hidden_control(cp)) {
        for (std::size_t k = 0; k < len; ++k) append_hex(piece, static_cast<unsigned char>(s[i + k]));
      } else {
        piece = std::string(s.substr(i, len));
      }
    }
    if (out.text.size() + piece.size() > limits.max_output) break;
    out.text += piece;
    i += len;
  }
  out.consumed = i;
  return out;
}

}  // namespace

std::string printable(std::string_view raw) {
  return escape(raw, EscapeStyle::kTerminalText).text;
}

std::string printable_command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += printable(a);
  }
  return out;
}

Escaped escape(std::string_view raw, EscapeStyle style, EscapeLimits limits) {
  if (style == EscapeStyle::kTerminalText) return escape_terminal_text(raw, limits);
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
