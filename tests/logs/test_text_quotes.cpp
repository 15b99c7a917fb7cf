// The two ways the project quotes input text in a message, pinned byte for byte on the same tricky
// inputs: a log excerpt (logs::excerpt: control bytes as \xNN, UTF-8 kept, bounded in output bytes,
// a cut says the whole length) and a decoder quote (discovery::escaped / quote_line: printable
// ASCII only with C escapes, bounded in input bytes). Both come from one implementation
// (common/escape.h); these tests are what proves that implementation kept both outputs.
#include <gtest/gtest.h>

#include <string>

#include "discovery/diagnostics.h"
#include "logs/excerpt.h"

using namespace std::string_literals;

namespace {

// ESC sequence, NUL, TAB, CR, LF, DEL, backslash, both quotes, two- and three-byte UTF-8.
const std::string kTricky = "a\x1b[2J"s + '\0' + "b\t\r\n\x7f\\\"'" + "caf\xc3\xa9 \xe2\x86\x92z";

}  // namespace

TEST(TextQuotes, LogExcerptEscapesOnlyControlBytesAndKeepsUtf8) {
  EXPECT_EQ(gpreempt::logs::excerpt(kTricky, 200),
            "a\\x1b[2J\\x00b\\x09\\x0d\\x0a\\x7f\\\"'caf\xc3\xa9 \xe2\x86\x92z");
}

TEST(TextQuotes, DecoderQuoteIsPrintableAsciiWithCEscapes) {
  EXPECT_EQ(gpreempt::discovery::escaped(kTricky),
            "a\\x1b[2J\\0b\\t\\r\\n\\x7f\\\\\\\"'caf\\xc3\\xa9 \\xe2\\x86\\x92z");
  EXPECT_EQ(gpreempt::discovery::quote_line(kTricky),
            "\"a\\x1b[2J\\0b\\t\\r\\n\\x7f\\\\\\\"'caf\\xc3\\xa9 \\xe2\\x86\\x92z\"");
}

// The excerpt's bound counts what it writes: an escape that would cross it is left out whole, and
// a cut says how long the text was.
TEST(TextQuotes, LogExcerptBoundCountsOutputBytes) {
  const std::string t = "ab\x1b" "cd";
  EXPECT_EQ(gpreempt::logs::excerpt(t, 5), "ab... (5 bytes)");  // "\x1b" (4 bytes) would make 6
  EXPECT_EQ(gpreempt::logs::excerpt(t, 6), "ab\\x1b... (5 bytes)");
  EXPECT_EQ(gpreempt::logs::excerpt(t, 8), "ab\\x1bcd");
  EXPECT_EQ(gpreempt::logs::excerpt(t, 0), "... (5 bytes)");
  EXPECT_EQ(gpreempt::logs::excerpt("", 0), "");
  // UTF-8 is kept as bytes, so the bound may fall inside a character (JSON output repairs it).
  EXPECT_EQ(gpreempt::logs::excerpt("caf\xc3\xa9", 4), "caf\xc3... (5 bytes)");
}

// The decoder quote's bound counts input bytes, whatever their escapes cost.
TEST(TextQuotes, DecoderQuoteBoundCountsInputBytes) {
  const std::string t = "ab\x1b" "cd";
  EXPECT_EQ(gpreempt::discovery::escaped(t, 3), "ab\\x1b");
  EXPECT_EQ(gpreempt::discovery::escaped(t, 2), "ab");
  EXPECT_EQ(gpreempt::discovery::escaped(t, 0), "");
  EXPECT_EQ(gpreempt::discovery::escaped("caf\xc3\xa9", 4), "caf\\xc3");
  const std::string at_bound(gpreempt::discovery::kExcerptBytes, '\t');
  std::string tabs;
  for (std::size_t i = 0; i < at_bound.size(); ++i) tabs += "\\t";
  EXPECT_EQ(gpreempt::discovery::quote_line(at_bound), "\"" + tabs + "\"");
  EXPECT_EQ(gpreempt::discovery::quote_line(at_bound + "x"), gpreempt::discovery::quote_line(at_bound) + "...");
}
