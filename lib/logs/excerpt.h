// A quote of log text for a diagnostic: at most a bounded number of bytes, control bytes (ESC, NUL,
// CR, TAB, …) written as \xNN so that a quote can neither drive a terminal nor break a line. Bytes
// 0x80 and up are kept: they are UTF-8 in real logs (JSON output replaces invalid ones). The
// escaping itself is common/escape.h's (EscapeStyle::kControlBytes), shared with the decoders'
// quotes (discovery/diagnostics.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpreempt::logs {

// `text` quoted in at most about `max_bytes` bytes (an escape that would cross the bound is left
// out whole); a cut quote ends in "..." and says how long the whole text was.
std::string excerpt(std::string_view text, std::size_t max_bytes);

}  // namespace gpreempt::logs
