#include "discovery/text_scan.h"

#include "common/hex.h"

#include <charconv>
#include <cstdio>

namespace gpreempt::discovery::detail {

std::string too_long_message(std::string_view line, std::size_t max_line, std::string_view what) {
  return "line longer than " + std::to_string(max_line) + " bytes, which " + std::string(what) +
         " never prints: " + quote_line(line, true);
}

std::size_t leading_spaces(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] == ' ') ++n;
  return n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::optional<std::uint64_t> parse_hex(std::string_view token) {
  if (token.empty() || token.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v, 16);
  if (ec != std::errc() || p != token.data() + token.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_number(std::string_view token) {
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X'))
    return parse_hex(token.substr(2));
  if (token.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v, 10);
  if (ec != std::errc() || p != token.data() + token.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_signed(std::string_view token) {
  if (token.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v, 10);
  if (ec != std::errc() || p != token.data() + token.size()) return std::nullopt;
  return v;
}

std::optional<HexRow> parse_hex_row(std::string_view line) {
  HexRow row;
  row.indent = leading_spaces(line);
  std::string_view rest = line.substr(row.indent);
  std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  auto off = parse_hex(rest.substr(0, colon));
  if (!off) return std::nullopt;
  row.offset = *off;
  rest.remove_prefix(colon + 1);
  while (!rest.empty()) {
    std::size_t sp = leading_spaces(rest);
    rest.remove_prefix(sp);
    if (rest.empty()) break;
    std::size_t end = rest.find(' ');
    std::string_view tok = rest.substr(0, end);
    auto v = tok.size() == 8 ? parse_hex(tok) : std::nullopt;
    if (!v) {
      row.malformed_value = true;
      break;
    }
    row.values.push_back(static_cast<std::uint32_t>(*v));
    rest.remove_prefix(tok.size());
  }
  return row;
}

std::string hex_string(std::uint64_t v) { return gpreempt::hex(v); }

}  // namespace gpreempt::discovery::detail
