// LogAnalyzer's reading: chunks into physical lines, and lines into logical records, undoing
// what terminals and pastes do to a log (hard wraps, records glued on one line, colour codes).
// Each record goes to one() or other() (hip_log_summary.cpp).
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "logs/byte_scan.h"
#include "logs/hip_log_impl.h"
#include "logs/line_scan.h"
#include "logs/log_record.h"

namespace gpreempt::logs {

namespace {

using detail::trim;

// First i >= from where s[i] is ESC, or s[i] is ':' after a blank (where a glued record may start;
// the caller confirms). Messages rarely hold either, so this is one pass over the message instead
// of a memchr for escapes plus a memchr per colon. `from` must be >= 1 (it is a message offset).
std::size_t next_escape_or_glue(std::string_view s, std::size_t from) {
  const char* p = s.data();
  const std::size_t n = s.size();
  std::size_t i = from;
#if defined(__SSE2__)
  const __m128i esc = _mm_set1_epi8('\x1b'), colon = _mm_set1_epi8(':'), blank = _mm_set1_epi8(' ');
  const auto hits = [&](std::size_t at) {
    const __m128i cur = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    const __m128i prev = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at - 1));
    const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(cur, esc),
                                     _mm_and_si128(_mm_cmpeq_epi8(cur, colon), _mm_cmpeq_epi8(prev, blank)));
    return static_cast<unsigned>(_mm_movemask_epi8(hit));
  };
  for (; i + 16 <= n; i += 16) {
    const unsigned mask = hits(i);
    if (mask) return i + static_cast<std::size_t>(__builtin_ctz(mask));
  }
  if (i < n && n >= 17) {  // the tail: the last 16 bytes, ignoring those before i
    const unsigned mask = hits(n - 16) >> (i - (n - 16));
    return mask ? i + static_cast<std::size_t>(__builtin_ctz(mask)) : std::string_view::npos;
  }
#endif
  for (; i < n; ++i)
    if (p[i] == '\x1b' || (p[i] == ':' && p[i - 1] == ' ')) return i;
  return std::string_view::npos;
}

constexpr std::size_t kMinTerminalWidth = 80;

}  // namespace

// --- chunk plumbing -------------------------------------------------------------------------
void LogAnalyzer::Impl::feed(std::string_view chunk) {
  std::size_t pos = 0;
  if (!carry.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    if (!nl) {
      append_carry(chunk);
      return;
    }
    const std::size_t n = static_cast<std::size_t>(static_cast<const char*>(nl) - chunk.data());
    append_carry(chunk.substr(0, n));
    physical_line(carry, 0);
    if (has_pending && !pending_owned) own_pending();  // it may point into `carry`
    carry.clear();
    pos = n + 1;
  }
  const char* base = chunk.data() + pos;
  const std::size_t size = chunk.size() - pos;
  pos += detail::for_each_line(base, size, [&](std::size_t begin, std::size_t end, const detail::LineSuspects& sus) {
    const std::string_view line(base + begin, end - begin);
    if (!whole_record_line(line, sus, std::string_view(base + end + 1, size - end - 1)))
      physical_line(line, sus.first);
  });
  if (pos < chunk.size()) append_carry(chunk.substr(pos));
  if (has_pending && !pending_owned) own_pending();  // the caller's chunk goes away
}

// The carry keeps one byte more than a record may have: physical_line drops a final '\r' before
// it applies the cap, as it does for a line that never went through the carry.
void LogAnalyzer::Impl::append_carry(std::string_view s) {
  const std::size_t cap = opt.max_record_bytes + 1;
  const std::size_t room = cap > carry.size() ? cap - carry.size() : 0;
  if (s.size() > room) sum.truncated_record = true;
  carry.append(s.substr(0, room));
}

void LogAnalyzer::Impl::end_stream() {
  if (!carry.empty()) {
    physical_line(carry, 0);
    flush();
    carry.clear();
  }
  flush();
  for (std::size_t l = 0; l < levels.size(); ++l)
    if (levels[l]) sum.levels[static_cast<int>(l)] = levels[l];
}

// --- physical lines -> logical records ------------------------------------------------------
// `suspect`: where the line's first ESC or " :<digit>:" is, as for_each_line reports it; 0 when
// unknown.
// Inlined into the line loop, like flush() and the clean-line path of split_glued(): they run
// once per line and the calls' register saving was a visible share of the per-line cost.
inline void LogAnalyzer::Impl::physical_line(std::string_view line, std::size_t suspect) {
  ++sum.lines;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > opt.max_record_bytes) {
    line = line.substr(0, opt.max_record_bytes);
    sum.truncated_record = true;
  }
  if (!starts_record(line) && has_pending && is_wrapped_continuation(line)) {
    own_pending();
    if (pending_store.size() + line.size() <= opt.max_record_bytes) {
      pending_store.append(line);
    } else {
      sum.truncated_record = true;
    }
    pending = pending_store;
    pending_suspect = 0;
  } else {
    flush();
    pending = line;
    pending_owned = false;
    pending_suspect = suspect;
    has_pending = true;
    pending_line = sum.lines;
  }
  prev_len = line.size();
  prev_may_wrap = may_be_wrapped(line);
}

// A line that starts a record, coloured or not: never the continuation of another.
bool LogAnalyzer::Impl::starts_record(std::string_view line) {
  return detail::is_record_start(line) || (!line.empty() && line[0] == '\x1b');
}

// A full terminal row with no padding at its end: the terminal may have wrapped the record
// there, so the next row may continue it (is_wrapped_continuation).
bool LogAnalyzer::Impl::may_be_wrapped(std::string_view line) {
  return line.size() >= kMinTerminalWidth && line.back() != ' ' && line.back() != '\t';
}

// --- lines that are a whole record ---------------------------------------------------------
// Most lines start a record that the next line cannot continue (is_wrapped_continuation): they
// are analyzed here straight from the scan, without physical_line's pending-record bookkeeping.
// The results are the same as through physical_line (tests/logs/test_log_line_scan.cpp feeds
// logs a byte at a time, which never comes here). `next`: the chunk's bytes after the line's
// '\n'. Returns false, having changed nothing, for any other line.
inline bool LogAnalyzer::Impl::whole_record_line(std::string_view line, const detail::LineSuspects& sus,
                                                 std::string_view next) {
  if (!detail::is_record_start(line) || line.size() > opt.max_record_bytes) return false;
  if (line.back() == '\r') line.remove_suffix(1);
  // A line that may be wrapped is whole only when the next line starts a record. (A "next
  // line" of under four bytes may look like a record start here; it is then too short to be a
  // continuation, so the answer stands.)
  if (may_be_wrapped(line) && !starts_record(next)) return false;
  detail::LogRecord rec;
  if (sus.count == 0) {
    if (!detail::parse_record(line, rec, &brackets)) return false;
    flush();
    ++sum.lines;
    const std::string_view s = trim(line);
    end_message_with(rec, s);
    one(rec, s, sum.lines);
    return true;
  }
  return coloured_record_line(line, sus, rec);
}

// ROCm 7 colours a message as a whole: "<prefix> \x1b[32m hipMalloc ( … ) \x1b[0m". With those
// two escapes only, and nothing but blanks after the second one, the message without colour is
// the text between them: no copy, no second scan. Anything else takes the general path
// (split_glued_suspect), which strips and rescans.
bool LogAnalyzer::Impl::coloured_record_line(std::string_view line, const detail::LineSuspects& sus,
                                               detail::LogRecord& rec) {
  const char* p = line.data();
  if (sus.count != 2 || sus.last >= line.size() || p[sus.first] != '\x1b' || p[sus.last] != '\x1b') return false;
  using Start = detail::LogRecord::MessageStart;
  if (!detail::parse_record(line, rec, &brackets) || rec.message_start == Start::kLookedAhead ||
      rec.message.data() != p + sus.first)
    return false;
  const std::size_t open_end = csi_end(line, sus.first), close_end = csi_end(line, sus.last);
  // The opening sequence must end before the closing one (else stripping swallows it), and its
  // first byte after must not be a ':' that the stripped text could glue onto a blank.
  if (open_end > sus.last || p[open_end] == ':' || !trim(line.substr(close_end)).empty()) return false;
  const std::string_view m = trim(line.substr(open_end, sus.last - open_end));
  if (m.empty()) return false;
  // Without a bracket the prefix parser looked at the message's first byte (LogRecord::MessageStart).
  if (rec.message_start == Start::kAfterColon && (m[0] == '[' || (m[0] >= '0' && m[0] <= '9'))) return false;
  flush();
  ++sum.lines;
  rec.message = m;
  one(rec, line, sum.lines, /*coloured=*/true);
  return true;
}

// Where the escape sequence at line[esc] ends: past a CSI's final byte ("\x1b[32m"), or just past
// a lone ESC.
std::size_t LogAnalyzer::Impl::csi_end(std::string_view line, std::size_t esc) {
  std::size_t j = esc + 1;
  if (j < line.size() && line[j] == '[') {
    ++j;
    while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
    ++j;  // the final byte
  }
  return std::min(j, line.size());
}

// A terminal hard-wraps a record that reaches the right margin: the previous row is a full
// terminal width with no padding, and rows of a pasted terminal are multiples of that width.
bool LogAnalyzer::Impl::is_wrapped_continuation(std::string_view line) const {
  if (!prev_may_wrap || line.size() < kMinTerminalWidth) return false;
  return prev_len % line.size() == 0 || line.size() % prev_len == 0;
}

void LogAnalyzer::Impl::own_pending() {
  if (pending_owned) return;
  pending_store.assign(pending);
  pending = pending_store;
  pending_owned = true;
}

inline void LogAnalyzer::Impl::flush() {
  if (!has_pending) return;
  has_pending = false;
  split_glued(pending, pending_line, pending_suspect);
}

// `suspect`: no escape and no glued record before this offset of `text` (0 when unknown).
inline void LogAnalyzer::Impl::split_glued(std::string_view text, std::size_t line_no, std::size_t suspect) {
  if (suspect != detail::kCleanLine) return split_glued_suspect(text, line_no, suspect);
  // Nothing to strip and nothing glued: the record is complete as parsed (what the scans in
  // split_glued_suspect would conclude).
  detail::LogRecord rec;
  if (!detail::parse_record(text, rec, &brackets)) return record(text, line_no);
  const std::string_view s = trim(text);
  end_message_with(rec, s);
  one(rec, s, line_no);
}

// parse_record trimmed the message's start; it ends where the trimmed line `s` does, or is empty
// when the trim took it all (a message of blanks and '\r's: the line's end is before its start).
void LogAnalyzer::Impl::end_message_with(detail::LogRecord& rec, std::string_view s) {
  const char* end = s.data() + s.size();
  rec.message = std::string_view(rec.message.data(),
                                 end > rec.message.data() ? static_cast<std::size_t>(end - rec.message.data()) : 0);
}

// A line that may hold an escape or a glued record from offset `suspect` on (0: anywhere).
void LogAnalyzer::Impl::split_glued_suspect(std::string_view text, std::size_t line_no, std::size_t suspect) {
  // ROCm colours only the message; a record whose prefix itself is coloured fails to parse and
  // is retried here without the escapes.
  detail::LogRecord rec;
  if (!text.empty() && text[0] != '\x1b' && detail::parse_record(text, rec, &brackets)) {
    // Common case first: one scan of the message for both an escape and a glued record; with
    // neither, the record is complete as parsed (what record() would conclude, minus its scans).
    const std::string_view s = trim(text);
    const std::size_t off = static_cast<std::size_t>(rec.message.data() - text.data());
    std::size_t hit = next_escape_or_glue(s, std::max(off, suspect));  // nothing before `suspect`
    while (hit != std::string_view::npos && s[hit] == ':' && !is_glued_at(s, hit))
      hit = next_escape_or_glue(s, hit + 1);
    if (hit == std::string_view::npos) {
      rec.message = trim(rec.message);
      return one(rec, s, line_no);
    }
    if (s[hit] != '\x1b' && !std::memchr(text.data() + hit, '\x1b', text.size() - hit))
      return record(text, line_no, &rec);
    // Escapes in the message only (ROCm 7 colours API calls): strip the message alone, and keep
    // the parsed prefix when it parses the same without them (LogRecord::MessageStart).
    using Start = detail::LogRecord::MessageStart;
    if (rec.message_start != Start::kLookedAhead &&
        (suspect >= off || detail::find_byte(text.data(), 0, off, '\x1b') == off)) {
      const std::string_view stripped = strip_ansi(text, off);
      const std::string_view m = trim(stripped.substr(off));
      if (rec.message_start == Start::kAfterBracket || m.empty() || (m[0] != '[' && (m[0] < '0' || m[0] > '9'))) {
        rec.message = stripped.substr(off);
        return record(stripped, line_no, &rec);
      }
      return record(stripped, line_no);  // the same as stripping the whole line
    }
    return record(strip_ansi(text), line_no);
  }
  if (std::memchr(text.data(), '\x1b', text.size())) text = strip_ansi(text);
  record(text, line_no);
}

// Records glued onto one line by a terminal paste: a record prefix preceded by a blank.
// Returns the offset in `text` (at or after `from`) where the next glued record starts.
std::size_t LogAnalyzer::Impl::next_glued(std::string_view text, std::size_t from) {
  // A record at 0 is not glued (it needs a blank before it), so the scan may start at 1.
  std::size_t i = next_escape_or_glue(text, std::max<std::size_t>(from, 1));
  while (i != std::string_view::npos && (text[i] != ':' || !is_glued_at(text, i)))
    i = next_escape_or_glue(text, i + 1);
  return i;
}

// Given " :" at i-1, i: does a glued record start at i?
bool LogAnalyzer::Impl::is_glued_at(std::string_view text, std::size_t i) {
  return detail::is_record_start(text, i) && looks_like_prefix(text.substr(i));
}

// Cheap confirmation that a ":N:" inside a line really starts a record: ":N:<file>.<ext>".
bool LogAnalyzer::Impl::looks_like_prefix(std::string_view s) {
  const std::size_t colon = s.find(':', 3);
  if (colon == std::string_view::npos || colon > 64) return false;
  const std::string_view file = s.substr(3, colon - 3);
  return file.find('.') != std::string_view::npos;
}

// Removes CSI sequences (ESC '[' … final byte), e.g. the colour ROCm 7 puts around API calls,
// from s[from, end); s[0, from) is kept as is.
std::string_view LogAnalyzer::Impl::strip_ansi(std::string_view s, std::size_t from) {
  // Written in place: the buffer only grows (up to the record cap), so no allocation or
  // bookkeeping per coloured line.
  if (ansi_scratch.size() < s.size()) ansi_scratch.resize(s.size());
  char* out = ansi_scratch.data();
  std::memcpy(out, s.data(), from);
  std::size_t len = from, pos = from;
  while (pos < s.size()) {
    // Inline search: messages are short and hold an escape or two, where a memchr call per
    // escape costs more than the search.
    const std::size_t e = detail::find_byte(s.data(), pos, s.size(), '\x1b');
    std::memcpy(out + len, s.data() + pos, e - pos);
    len += e - pos;
    if (e == s.size()) break;
    pos = csi_end(s, e);
  }
  return std::string_view(out, len);
}

// --- one logical record ---------------------------------------------------------------------
// One physical record, possibly holding several glued ones; a loop, not recursion, so a huge
// pasted line cannot exhaust the stack. `parsed`: the caller already parsed `s`.
void LogAnalyzer::Impl::record(std::string_view s, std::size_t line_no, const detail::LogRecord* parsed) {
  while (true) {
    s = trim(s);
    if (s.empty()) return;
    detail::LogRecord rec;
    if (parsed) {
      rec = *parsed;
      rec.message = trim(rec.message);
      parsed = nullptr;
    } else if (!detail::parse_record(s, rec, &brackets)) {
      // Not a record: maybe one glued in later on the line (the paste's first row was other text).
      const std::size_t g = next_glued(s, 1);
      ++sum.records;
      other(g == std::string_view::npos ? s : trim(s.substr(0, g)), line_no);
      if (g == std::string_view::npos) return;
      s = s.substr(g);
      continue;
    }
    // Only the message can hold a glued record; the prefix's own colons are never preceded by one.
    const std::size_t off = static_cast<std::size_t>(rec.message.data() - s.data());
    const std::size_t g = next_glued(s, off);
    if (g == std::string_view::npos) return one(rec, s, line_no);
    rec.message = trim(s.substr(off, g - off));
    one(rec, trim(s.substr(0, g)), line_no);
    s = s.substr(g);
  }
}

}  // namespace gpreempt::logs
