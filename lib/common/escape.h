// The project's one way of making input text safe to quote in a message: every byte that could
// drive a terminal or break a line is written as an escape, and the quote is bounded. Two styles
// exist on purpose, one per kind of input:
//  - log text (AMD_LOG_LEVEL lines, kernel names, file names) is the user's own, usually UTF-8
//    prose: only control bytes are escaped (\xNN), so names with accents stay readable and the JSON
//    output can carry them;
//  - decoder input (sysfs, debugfs, captures) is ASCII by contract: a byte outside printable ASCII
//    is itself the evidence of what went wrong, so every one is shown (C escapes for the common
//    ones, \xNN for the rest, backslash and double quote escaped so the quote can be read back);
//  - text another user chose (a process's command line in the journal, `gpreempt ctl status`,
//    `gpreempt top`) must not reach a terminal as anything but text: besides the control bytes,
//    the C1 controls (U+0080..U+009F, which terminals honour as CSI and friends), the
//    direction overrides that reorder what a reader sees (U+202A..U+202E, U+2066..U+2069,
//    U+200E/F, U+061C) and bytes that are not UTF-8 are shown as \xNN, and a backslash as \\, so
//    the text cannot pass for an escape of ours.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt {

enum class EscapeStyle {
  kControlBytes,    // bytes below 0x20 and 0x7f as \xNN; every other byte as is
  kPrintableAscii,  // \0 \t \r \n \\ \" and \xNN for every byte outside 0x20..0x7e
  kTerminalText,    // kControlBytes plus C1 controls, direction overrides, invalid UTF-8, '\\'
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

// Text another user chose, safe to print to a terminal or the journal (kTerminalText).
std::string printable(std::string_view raw);
// A process's argv as one printable line: the arguments, each printable(), joined by spaces.
std::string printable_command_line(const std::vector<std::string>& argv);

}  // namespace gpreempt
