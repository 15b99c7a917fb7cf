#include "logs/hip_log_analyzer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "logs/byte_scan.h"
#include "logs/excerpt.h"
#include "logs/line_scan.h"
#include "logs/log_record.h"

namespace gpreempt::logs {

namespace {

// The keyword's length is a constant, so the comparison compiles to a few loads instead of a call.
template <std::size_t N>
bool starts_with(std::string_view s, const char (&p)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), p, N - 1) == 0;
}

// Inlined: it runs several times per record, mostly finding nothing to trim.
[[gnu::always_inline]] inline std::string_view trim(std::string_view s) {
  const char* b = s.data();
  const char* e = b + s.size();
  while (b != e && (*b == ' ' || *b == '\t')) ++b;
  while (e != b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) --e;
  return std::string_view(b, static_cast<std::size_t>(e - b));
}

// Parses "0x…" (or bare hex) at the start of s; advances s past it.
std::optional<std::uint64_t> take_hex(std::string_view& s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  return v;
}

std::optional<std::uint64_t> take_dec(std::string_view& s) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  return v;
}

// Value after `key` anywhere in s.
std::optional<std::uint64_t> hex_after(std::string_view s, std::string_view key) {
  const std::size_t k = s.find(key);
  if (k == std::string_view::npos) return std::nullopt;
  s.remove_prefix(k + key.size());
  return take_hex(s);
}
std::optional<std::uint64_t> dec_after(std::string_view s, std::string_view key) {
  const std::size_t k = s.find(key);
  if (k == std::string_view::npos) return std::nullopt;
  s.remove_prefix(k + key.size());
  return take_dec(s);
}

// Where a return line, "<function>: Returned <hipError_t> : …", has its ": Returned ", or npos.
// ROCclr's HIP_RETURN prints the C function's name (__func__) first, so the phrase follows the
// message's first blank, ':' or '(' right there; an entry line, "<api> ( args )", stops at its
// blank. (A ": Returned " further on, in a call's arguments or a kernel name, is not a return.)
std::size_t returned_at(std::string_view m) {
  constexpr std::string_view kPhrase = ": Returned ";
  const std::size_t k = detail::find_first_of(m.data(), 0, m.size(), ' ', ':', '(');
  if (k == 0 || m.size() - k < kPhrase.size() || std::memcmp(m.data() + k, kPhrase.data(), kPhrase.size()) != 0)
    return std::string_view::npos;
  return k;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "<function>: Returned <code> : …" with a code other than hipSuccess. Whoever returns it — a hip*
// API call or a runtime-internal function (ihipModuleLoad, __hipRegisterFatBinary, …) — the line
// reports a failure. The name must be a C identifier, as __func__ is.
bool failed_return(std::string_view m) {
  if (!is_identifier_char(m[0]) || (m[0] >= '0' && m[0] <= '9')) return false;
  const std::size_t k = returned_at(m);
  if (k == std::string_view::npos || starts_with(m.substr(k + 11), "hipSuccess")) return false;
  for (std::size_t i = 1; i < k; ++i)
    if (!is_identifier_char(m[i])) return false;
  return true;
}

// Whether s holds "Me", "ab" or "HS", where the fault phrases below begin: one pass, which rules out
// most messages ("Command (KernelExecution) enqueued: …" asks on every kernel launch) before the
// four searches.
bool may_hold_fault_text(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i m = _mm_set1_epi8('M'), e = _mm_set1_epi8('e'), a = _mm_set1_epi8('a'), b = _mm_set1_epi8('b'),
                h = _mm_set1_epi8('H'), hs = _mm_set1_epi8('S');
  for (; i + 17 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    const __m128i hit =
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(x, m), _mm_cmpeq_epi8(y, e)),
                     _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(y, b)),
                                  _mm_and_si128(_mm_cmpeq_epi8(x, h), _mm_cmpeq_epi8(y, hs))));
    if (_mm_movemask_epi8(hit)) return true;
  }
#endif
  for (; i + 1 < n; ++i)
    if ((p[i] == 'M' && p[i + 1] == 'e') || (p[i] == 'a' && p[i + 1] == 'b') || (p[i] == 'H' && p[i + 1] == 'S'))
      return true;
  return false;
}

bool is_fault_text(std::string_view s) {
  if (!may_hold_fault_text(s)) return false;
  return s.find("Memory access fault") != std::string_view::npos ||
         s.find("Memory Fault Error") != std::string_view::npos ||
         s.find("aborting with error") != std::string_view::npos ||
         s.find("HSA_STATUS_ERROR") != std::string_view::npos;
}

// Lines of the multi-line queue-error dump ROCclr prints without a record prefix.
bool is_dump_line(std::string_view t) {
  return starts_with(t, "Kernel Name:") || starts_with(t, "VGPU=") ||
         starts_with(t, "Dispatch Header") || starts_with(t, "grid=") ||
         starts_with(t, "private_seg_size=") || starts_with(t, "kernel_obj=") ||
         starts_with(t, "completion_signal=") || starts_with(t, "rptr=");
}

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

constexpr std::size_t kMaxErrorText = 400;
constexpr std::size_t kMinTerminalWidth = 80;

}  // namespace

struct LogAnalyzer::Impl {
  AnalyzerOptions opt;
  LogSummary sum;

  std::string carry;           // partial physical line at the end of the last chunk
  std::string_view pending;    // the record being assembled (may continue on the next line)
  std::string pending_store;   // owns `pending` when it cannot point into the caller's chunk
  bool has_pending = false;
  bool pending_owned = false;
  // No escape and no " :<digit>:" in `pending` before this offset (line_scan.h); 0 when unknown,
  // detail::kCleanLine when there is none.
  std::size_t pending_suspect = 0;
  std::size_t pending_line = 0;
  std::size_t prev_len = 0;
  bool prev_may_wrap = false;  // may_be_wrapped(the previous line)
  std::string ansi_scratch;
  detail::BracketCache brackets;

  // Keys outside int's range: a log may print any int as its pid, -1 included (found by fuzzing).
  static constexpr std::int64_t kNoPid = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kNoRecordYet = kNoPid + 1;
  std::map<std::int64_t, std::size_t> proc_index;  // pid (kNoPid: none) -> processes[]
  std::int64_t last_pid = kNoRecordYet;
  std::size_t last_proc = 0;
  std::string last_tid;
  std::uint64_t last_bracket = 0;  // LogRecord::bracket of the last record thread() saw

  std::map<std::pair<std::int64_t, std::uint64_t>, std::size_t> hwq_index;
  std::vector<std::uint64_t> hwq_first;             // PieceSummary::first_record
  std::map<std::uint64_t, detail::DumpedQueue> dumps;  // PieceSummary::dumps
  std::pair<std::int64_t, std::uint64_t> last_hwq_key{-2, 0};
  std::size_t last_hwq = 0;

  std::string_view last_kernel;  // the key in sum.kernels (map nodes never move)
  std::uint64_t* last_kernel_count = nullptr;

  bool finished = false;
  std::array<std::uint64_t, 10> levels{};

  explicit Impl(AnalyzerOptions o) : opt(o) {}

  // --- physical lines -> logical records ------------------------------------------------------
  // `suspect`: where the line's first ESC or " :<digit>:" is, as for_each_line reports it; 0 when
  // unknown.
  // Inlined into the line loop, like flush() and the clean-line path of split_glued(): they run
  // once per line and the calls' register saving was a visible share of the per-line cost.
  [[gnu::always_inline]] void physical_line(std::string_view line, std::size_t suspect) {
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
  static bool starts_record(std::string_view line) {
    return detail::is_record_start(line) || (!line.empty() && line[0] == '\x1b');
  }

  // A full terminal row with no padding at its end: the terminal may have wrapped the record
  // there, so the next row may continue it (is_wrapped_continuation).
  static bool may_be_wrapped(std::string_view line) {
    return line.size() >= kMinTerminalWidth && line.back() != ' ' && line.back() != '\t';
  }

  // --- lines that are a whole record ---------------------------------------------------------
  // Most lines start a record that the next line cannot continue (is_wrapped_continuation): they
  // are analyzed here straight from the scan, without physical_line's pending-record bookkeeping.
  // The results are the same as through physical_line (tests/logs/test_log_line_scan.cpp feeds
  // logs a byte at a time, which never comes here). `next`: the chunk's bytes after the line's
  // '\n'. Returns false, having changed nothing, for any other line.
  [[gnu::always_inline]] bool whole_record_line(std::string_view line, const detail::LineSuspects& sus,
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
  bool coloured_record_line(std::string_view line, const detail::LineSuspects& sus, detail::LogRecord& rec) {
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
  static std::size_t csi_end(std::string_view line, std::size_t esc) {
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
  bool is_wrapped_continuation(std::string_view line) const {
    if (!prev_may_wrap || line.size() < kMinTerminalWidth) return false;
    return prev_len % line.size() == 0 || line.size() % prev_len == 0;
  }

  void own_pending() {
    if (pending_owned) return;
    pending_store.assign(pending);
    pending = pending_store;
    pending_owned = true;
  }

  [[gnu::always_inline]] void flush() {
    if (!has_pending) return;
    has_pending = false;
    split_glued(pending, pending_line, pending_suspect);
  }

  // `suspect`: no escape and no glued record before this offset of `text` (0 when unknown).
  [[gnu::always_inline]] void split_glued(std::string_view text, std::size_t line_no, std::size_t suspect) {
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
  static void end_message_with(detail::LogRecord& rec, std::string_view s) {
    const char* end = s.data() + s.size();
    rec.message = std::string_view(rec.message.data(),
                                   end > rec.message.data() ? static_cast<std::size_t>(end - rec.message.data()) : 0);
  }

  // A line that may hold an escape or a glued record from offset `suspect` on (0: anywhere).
  void split_glued_suspect(std::string_view text, std::size_t line_no, std::size_t suspect) {
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
  static std::size_t next_glued(std::string_view text, std::size_t from) {
    // A record at 0 is not glued (it needs a blank before it), so the scan may start at 1.
    std::size_t i = next_escape_or_glue(text, std::max<std::size_t>(from, 1));
    while (i != std::string_view::npos && (text[i] != ':' || !is_glued_at(text, i)))
      i = next_escape_or_glue(text, i + 1);
    return i;
  }

  // Given " :" at i-1, i: does a glued record start at i?
  static bool is_glued_at(std::string_view text, std::size_t i) {
    return detail::is_record_start(text, i) && looks_like_prefix(text.substr(i));
  }

  // Cheap confirmation that a ":N:" inside a line really starts a record: ":N:<file>.<ext>".
  static bool looks_like_prefix(std::string_view s) {
    const std::size_t colon = s.find(':', 3);
    if (colon == std::string_view::npos || colon > 64) return false;
    const std::string_view file = s.substr(3, colon - 3);
    return file.find('.') != std::string_view::npos;
  }

  // Removes CSI sequences (ESC '[' … final byte), e.g. the colour ROCm 7 puts around API calls,
  // from s[from, end); s[0, from) is kept as is.
  std::string_view strip_ansi(std::string_view s, std::size_t from = 0) {
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
  void record(std::string_view s, std::size_t line_no, const detail::LogRecord* parsed = nullptr) {
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

  // `s`: the record's text, for error entries; `coloured`: s still holds the colour codes, which
  // an error entry leaves out (stripped only then: errors are rare).
  void one(const detail::LogRecord& rec, std::string_view s, std::size_t line_no, bool coloured = false) {
    ++sum.records;
    const detail::LogRecord* r = &rec;
    if (opt.pid && r->pid && *r->pid != *opt.pid) {
      ++sum.other_pids;
      return;
    }
    ++sum.recognized;
    ++levels[static_cast<std::size_t>(r->level)];
    thread(*r);
    std::string_view m = r->message;
    if (r->level == 1) error(line_no, s, coloured);
    const std::int64_t pid = r->pid ? *r->pid : -1;
    if (m.empty()) return;
    // ROCm 4.x separates some messages from the prefix with "!" and a TAB: "[7fb360ad23c0]!\tShaderName : …".
    if (m[0] == '!' && m.size() > 1 && m[1] == '\t') {
      m = trim(m.substr(2));
      if (m.empty()) return;
    }
    switch (m[0]) {
      case 'S':
        if (starts_with(m, "SWq=")) return packet(pid, m);
        if (starts_with(m, "ShaderName :")) return kernel(trim(m.substr(12)));
        if (starts_with(m, "Selected queue refCount:")) return refcount(pid, m.substr(24), true);
        break;
      case 'H':
        if (starts_with(m, "HWq=")) return packet(pid, m);
        break;
      case 'C':
        if (starts_with(m, "Created SWq=")) return created(pid, m, line_no, true);
        if (starts_with(m, "Callback: Queue ")) {
          if (r->level != 1 && is_fault_text(m)) error(line_no, s, coloured);
          return;
        }
        break;
      case 'c':
        if (starts_with(m, "created hardware queue ")) return created(pid, m, line_no, false);
        break;
      case 'a':
        if (starts_with(m, "acquireQueue refCount:")) return refcount(pid, m.substr(22), true);
        break;
      case 'r':
        if (starts_with(m, "releaseQueue refCount:")) return refcount(pid, m.substr(22), false);
        break;
      case 'D':
        if (starts_with(m, "Deleting hardware queue ")) {
          std::string_view v = m.substr(24);
          if (auto a = take_hex(v)) hwq(pid, *a).deleted = true;
          return;
        }
        break;
      default:
        break;
    }
    // Any function's return, the runtime's own (module loading, init, …) as much as a hip* call's.
    if (failed_return(m)) {
      if (r->level != 1) error(line_no, s, coloured);
      return;
    }
    if (r->level != 1 && (m[0] == 'M' || m[0] == 'H' || m[0] == 'C') && is_fault_text(m)) error(line_no, s, coloured);
  }

  void other(std::string_view s, std::size_t line_no) {
    const bool fault = is_fault_text(s);
    if (fault) error(line_no, s);
    if (!fault && !is_dump_line(s)) return;
    ++sum.recognized;
    // "VGPU=0x… SWq=0x…, HWq=0x…, id=N" ties a software queue to its hardware queue.
    // It prints no pid: which queue it belongs to is settled at the end (detail::resolve_dumps).
    if (starts_with(s, "VGPU=")) {
      auto hw = hex_after(s, "HWq=");
      if (!hw) return;
      auto [it, inserted] = dumps.try_emplace(*hw);
      if (inserted) it->second.first_record = sum.records;
      if (auto sw = hex_after(s, "SWq=")) it->second.sw_queues.insert(*sw);
      if (auto id = dec_after(s, "id=")) it->second.ids.insert(*id);
    }
  }

  void thread(const detail::LogRecord& r) {
    // The same bracket as the last record's: the same pid and tid (LogRecord::bracket).
    if (r.bracket != 0 && r.bracket == last_bracket) return;
    last_bracket = r.bracket;
    const std::optional<int> pid = r.pid;
    const std::string_view tid = r.tid;
    const std::int64_t key = pid ? *pid : kNoPid;
    if (key != last_pid) {
      auto [it, inserted] = proc_index.try_emplace(key, sum.processes.size());
      if (inserted) sum.processes.push_back({pid, {}});
      last_pid = key;
      last_proc = it->second;
      last_tid.clear();
    }
    if (!tid.empty() && (tid.size() != last_tid.size() || !detail::equal_bytes(tid.data(), last_tid.data(), tid.size()))) {
      sum.processes[last_proc].tids.emplace(tid);
      last_tid.assign(tid);
    }
  }

  HwQueueStats& hwq(std::int64_t pid, std::uint64_t address) {
    const auto key = std::make_pair(pid, address);
    if (key == last_hwq_key) return sum.hw_queues[last_hwq];
    auto [it, inserted] = hwq_index.try_emplace(key, sum.hw_queues.size());
    if (inserted) {
      HwQueueStats q;
      if (pid >= 0) q.pid = static_cast<int>(pid);
      q.address = address;
      sum.hw_queues.push_back(std::move(q));
      hwq_first.push_back(sum.records);
    }
    last_hwq_key = key;
    last_hwq = it->second;
    return sum.hw_queues[it->second];
  }

  // "SWq=0x…, HWq=0x…, id=N, Dispatch Header = …" / "… BarrierAND Header = …" (ROCm 6+),
  // "HWq=0x…, Dispatch Header = …" (ROCm 5).
  void packet(std::int64_t pid, std::string_view m) {
    std::optional<std::uint64_t> sw;
    if (starts_with(m, "SWq=")) {
      m.remove_prefix(4);
      sw = take_hex(m);
      if (!sw) return;
      if (starts_with(m, ", ")) m.remove_prefix(2);
    }
    if (!starts_with(m, "HWq=")) return;
    m.remove_prefix(4);
    auto hw = take_hex(m);
    if (!hw) return;
    if (starts_with(m, ", ")) m.remove_prefix(2);
    std::optional<std::uint64_t> id;
    if (starts_with(m, "id=")) {
      m.remove_prefix(3);
      id = take_dec(m);
      if (starts_with(m, ", ")) m.remove_prefix(2);
    }
    HwQueueStats& q = hwq(pid, *hw);
    if (sw) q.sw_queues.insert(*sw);
    if (id) q.ids.insert(*id);
    if (starts_with(m, "Dispatch Header")) {
      ++q.dispatches;
      ++sum.dispatches;
    } else if (starts_with(m, "BarrierAND Header")) {
      ++q.barriers;
      ++sum.barriers;
    }
  }

  void created(std::int64_t pid, std::string_view m, std::size_t line_no, bool with_swq) {
    std::optional<std::uint64_t> hw, sw;
    if (with_swq) {
      sw = hex_after(m, "SWq=");
      hw = hex_after(m, "HWq=");
    } else {
      std::string_view v = m.substr(23);
      hw = take_hex(v);
    }
    if (!hw) return;
    HwQueueStats& q = hwq(pid, *hw);
    if (sw) q.sw_queues.insert(*sw);
    if (auto size = dec_after(m, "with size ")) q.size = *size;
    if (auto prio = dec_after(m, "with priority ")) q.priority = static_cast<int>(*prio);
    if (auto coop = dec_after(m, "cooperative: ")) q.cooperative = *coop != 0;
    q.created_line = line_no;
  }

  void refcount(std::int64_t pid, std::string_view rest, bool acquire) {
    rest = trim(rest);
    auto a = take_hex(rest);
    if (!a) return;
    HwQueueStats& q = hwq(pid, *a);
    if (acquire)
      ++q.acquired;
    else
      ++q.released;
  }

  void kernel(std::string_view name) {
    if (last_kernel_count && name.size() == last_kernel.size() &&
        detail::equal_bytes(name.data(), last_kernel.data(), name.size())) {
      ++*last_kernel_count;
      return;
    }
    auto it = sum.kernels.find(name);  // the name is copied only the first time it is seen
    if (it == sum.kernels.end()) it = sum.kernels.emplace(std::string(name), 0).first;
    ++it->second;
    last_kernel = it->first;
    last_kernel_count = &it->second;
  }


  // `coloured`: `text` still holds colour codes, which the entry leaves out.
  void error(std::size_t line_no, std::string_view text, bool coloured = false) {
    ++sum.errors_total;
    if (sum.errors.size() >= opt.max_errors) return;
    text = trim(coloured ? strip_ansi(text) : text);
    sum.errors.push_back({line_no, excerpt(text, kMaxErrorText)});
  }

  // --- chunk plumbing -------------------------------------------------------------------------
  void feed(std::string_view chunk) {
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
  void append_carry(std::string_view s) {
    const std::size_t cap = opt.max_record_bytes + 1;
    const std::size_t room = cap > carry.size() ? cap - carry.size() : 0;
    if (s.size() > room) sum.truncated_record = true;
    carry.append(s.substr(0, room));
  }

  const LogSummary& finish() {
    if (finished) return sum;
    sum = detail::resolve_dumps(finish_piece());
    return sum;
  }

  detail::PieceSummary finish_piece() {
    end_stream();
    finished = true;
    hwq_index.clear();
    last_hwq_key = {-2, 0};
    last_kernel_count = nullptr;
    return {std::move(sum), std::move(hwq_first), std::move(dumps)};
  }

  void end_stream() {
    if (!carry.empty()) {
      physical_line(carry, 0);
      flush();
      carry.clear();
    }
    flush();
    for (std::size_t l = 0; l < levels.size(); ++l)
      if (levels[l]) sum.levels[static_cast<int>(l)] = levels[l];
  }
};

LogAnalyzer::LogAnalyzer(AnalyzerOptions options) : impl_(std::make_unique<Impl>(options)) {}
LogAnalyzer::~LogAnalyzer() = default;
void LogAnalyzer::feed(std::string_view chunk) { impl_->feed(chunk); }
const LogSummary& LogAnalyzer::finish() { return impl_->finish(); }
detail::PieceSummary LogAnalyzer::finish_piece() { return impl_->finish_piece(); }

namespace detail {

LogSummary resolve_dumps(PieceSummary piece) {
  LogSummary& s = piece.summary;
  std::vector<std::uint64_t>& first = piece.first_record;
  if (piece.dumps.empty()) return std::move(s);
  // Per address: its first queue (queues are in order of first record) and its pid-less one.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::unordered_map<std::uint64_t, std::pair<std::size_t, std::size_t>> by_address;
  for (std::size_t i = 0; i < s.hw_queues.size(); ++i) {
    auto [it, inserted] = by_address.try_emplace(s.hw_queues[i].address, i, kNone);
    if (!s.hw_queues[i].pid) it->second.second = i;
  }
  for (auto& [address, d] : piece.dumps) {
    const auto it = by_address.find(address);
    std::size_t target = kNone;
    if (it != by_address.end() && first[it->second.first] < d.first_record) {
      target = it->second.first;
    } else if (it != by_address.end() && it->second.second != kNone) {
      target = it->second.second;  // named by a pid-less record only after the dump
      first[target] = d.first_record;
    } else {
      HwQueueStats q;
      q.address = address;
      s.hw_queues.push_back(std::move(q));
      first.push_back(d.first_record);
      target = s.hw_queues.size() - 1;
    }
    s.hw_queues[target].sw_queues.merge(d.sw_queues);
    s.hw_queues[target].ids.merge(d.ids);
  }
  // Back into order of first appearance (ordinals are distinct: one record names one queue).
  std::vector<std::size_t> order(s.hw_queues.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first[a] < first[b]; });
  std::vector<HwQueueStats> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(s.hw_queues[i]));
  s.hw_queues = std::move(sorted);
  return std::move(s);
}

}  // namespace detail

LogSummary analyze_log(std::string_view text, AnalyzerOptions options) {
  LogAnalyzer a(options);
  a.feed(text);
  return a.finish();
}

}  // namespace gpreempt::logs
