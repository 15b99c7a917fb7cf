// Small lexical helpers shared by the debugfs/sysfs decoders: the line loop every decoder runs,
// and the `seq_hex_dump` / `seq_reg_dump` row format. Internal to lib/discovery.
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

namespace gpreempt::discovery::detail {

// Runs `on_line(line, cut)` on every line of `src` (`cut`: only the first max_line() bytes of a
// longer line are given) until it returns false. Meanwhile the first lines are sniffed: when they
// show another kind of file than `own`, reading stops at once and that kind is returned, so a
// decoder handed the wrong file reads a few lines, not the whole file.
template <class OnLine>
std::optional<InputKind> for_each_line(LineSource& src, InputKind own, OnLine&& on_line) {
  InputSniffer sniff;
  std::string_view line;
  while (src.next(line)) {
    if (!sniff.decided()) {
      sniff.feed(line);
      if (sniff.decided() && sniff.kind() != own && sniff.kind() != InputKind::unknown) return sniff.kind();
    }
    if (!on_line(line, src.line_cut())) return std::nullopt;
  }
  if (const InputKind k = sniff.kind(); !sniff.decided() && k != own && k != InputKind::unknown) return k;
  return std::nullopt;
}

// The diagnostic for a line longer than any line of the format (`what` = the format's name).
std::string too_long_message(std::string_view line, std::size_t max_line, std::string_view what);

std::size_t leading_spaces(std::string_view s);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

// Hex number without 0x (as debugfs prints them); nullopt unless the whole token is hex digits.
std::optional<std::uint64_t> parse_hex(std::string_view token);
// Decimal, or hex with a 0x prefix.
std::optional<std::uint64_t> parse_number(std::string_view token);
std::optional<std::int64_t> parse_signed(std::string_view token);

// One row of a hex dump: "<indent><offset>: <v0> <v1> ...". Values are 32-bit words.
struct HexRow {
  std::size_t indent = 0;
  std::uint64_t offset = 0;
  std::vector<std::uint32_t> values;
  bool malformed_value = false;  // a token after ": " was not an 8-digit hex word
};
// nullopt when the line is not shaped like a dump row at all (no "<hex>: " after the indent).
std::optional<HexRow> parse_hex_row(std::string_view line);

std::string hex_string(std::uint64_t v);  // gpreempt::hex (common/hex.h) under the name the decoders use

}  // namespace gpreempt::discovery::detail
