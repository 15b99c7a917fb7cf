// The project's one way of making input text safe to quote in a message: every byte that could
// drive a terminal or break a line is written as an escape, and the quote is bounded. Two styles
// exist on purpose, one per kind of input:
//  - log text (AMD_LOG_LEVEL lines, kernel names, file names) is the user's own, usually UTF-8
//    prose: only control bytes are escaped (\xNN), so names with accents stay readable and the JSON
//    output can carry them;
//  - decoder input (sysfs, debugfs, captures) is ASCII by contract: a byte outside printable ASCII
//    is itself the evidence of what went wrong, so every one is shown (C escapes for the common
//    ones, \xNN for the rest, backslash and double quote escaped so the quote can be read back).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace gpreempt {

enum class EscapeStyle {
  kControlBytes,    // bytes below 0x20 and 0x7f as \xNN; every other byte as is
  kPrintableAscii,  // \0 \t \r \n \\ \" and \xNN for every byte outside 0x20..0x7e
};

struct EscapeLimits {
  std::size_t max_input = std::numeric_limits<std::size_t>::max();   // bytes of `raw` read at most
  std::size_t max_output = std::numeric_limits<std::size_t>::max();  // an escape that would cross it is left out whole
};

struct Escaped {
  std::string text;
  std::size_t consumed = 0;  // bytes of `raw` that `text` stands for; < raw.size() when cut
};

Escaped escape(std::string_view raw, EscapeStyle style, EscapeLimits limits = {});

}  // namespace gpreempt
