// Small lexical helpers shared by the debugfs/sysfs decoders: line iteration with 1-based
// numbers, and the `seq_hex_dump` / `seq_reg_dump` row format. Internal to lib/discovery.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gpreempt::discovery::detail {

// Iterates over lines; strips "\n" and a trailing "\r". A final line without "\n" is still a line.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line);
  std::size_t line_number() const { return line_no_; }  // of the line last returned
  bool ended_with_newline() const { return text_.empty() || text_.back() == '\n'; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_no_ = 0;
};

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
