#include "logs/log_record.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "logs/byte_scan.h"

namespace gpreempt::logs::detail {

namespace {
// The helpers below run several times per log line on fields of a few bytes: inlined, they cost
// a compare or two each instead of a call.
[[gnu::always_inline]] inline std::string_view trim_left(std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p != end && (*p == ' ' || *p == '\t')) ++p;
  return std::string_view(p, static_cast<std::size_t>(end - p));
}
[[gnu::always_inline]] inline std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// std::from_chars for an int (optional '-', then digits), inlined: a pid is parsed on every line
// and the library call showed in profiles. Returns the end of the digits, or `b` when there are
// none; `ok` is false then and when the value does not fit, as with from_chars.
[[gnu::always_inline]] inline const char* parse_int(const char* b, const char* e, int& value, bool& ok) {
  const char* q = b;
  const bool negative = q < e && *q == '-';
  if (negative) ++q;
  const char* digits = q;
  std::uint64_t v = 0;
  bool overflow = false;
  for (; q < e && is_digit(*q); ++q) {
    v = v * 10 + static_cast<std::uint64_t>(*q - '0');
    overflow |= v > (std::uint64_t{1} << 31);
  }
  ok = q != digits && !overflow && v <= (negative ? std::uint64_t{1} << 31 : (std::uint64_t{1} << 31) - 1);
  if (q == digits) return b;
  if (ok) value = negative ? static_cast<int>(-static_cast<std::int64_t>(v)) : static_cast<int>(v);
  return q;
}

// ROCclr prints the source line as "%-4d:", so p[0, 5) is digits, then blanks, then ':' whenever
// the number has at most four digits. Bitwise & and | keep the check free of branches (a byte loop
// over the padding mispredicted on almost every line); any other shape takes the general path.
bool is_padded_line_number(const char* p) {
  const auto d = [p](int k) { return static_cast<unsigned char>(p[k] - '0') <= 9; };
  const auto b = [p](int k) { return p[k] == ' '; };
  return d(0) & ((d(1) & ((d(2) & (d(3) | b(3))) | (b(2) & b(3)))) | (b(1) & b(2) & b(3))) & (p[4] == ':');
}

// Index of the first non-digit at or after i. Timestamps are 10-12 digits, and a byte loop
// mispredicts its exit on every line; eight bytes at a time it is one or two steps. A byte is a
// digit iff its high nibble is 3 both as is and after adding 6 ('0'..'9' -> 0x36..0x3f). The add
// may carry into the next byte only from a non-digit byte, which is already past the answer.
inline __attribute__((always_inline)) std::size_t skip_digits(const char* p, std::size_t i, std::size_t n) {
  constexpr std::uint64_t kHigh = 0xf0f0f0f0f0f0f0f0ull, kThree = 0x3030303030303030ull,
                          kSix = 0x0606060606060606ull;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x;
      std::memcpy(&x, p + i, 8);
      const std::uint64_t bad = ((x & kHigh) ^ kThree) | (((x + kSix) & kHigh) ^ kThree);
      if (bad) return i + static_cast<std::size_t>(std::countr_zero(bad)) / 8;
    }
  }
  while (i < n && is_digit(p[i])) ++i;
  return i;
}

// The padded-name shortcut is only right when no earlier colon ends the name (":3:a.cpp :7 : 7:
// ShaderName : k" has a colon at 28 too). Bytes 3..27 as two overlapping 16-byte compares.
bool no_colon_in_3_to_27(const char* p) {
#if defined(__SSE2__)
  const __m128i colon = _mm_set1_epi8(':');
  const __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3)), colon);
  const __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 12)), colon);
  return _mm_movemask_epi8(_mm_or_si128(a, b)) == 0;
#else
  return std::memchr(p + 3, ':', 25) == nullptr;
#endif
}
}  // namespace

// Hand-rolled: this runs once per log line and the fields are short, so byte loops beat
// repeated memchr calls (see bench/logs).
bool parse_record(std::string_view s, LogRecord& r, BracketCache* cache) {
  if (!is_record_start(s)) return false;
  // Field by field: "r = LogRecord{}" built a temporary on the stack and copied it with stores and
  // loads of different widths, which stalled store forwarding and was most of this function's time.
  r.level = s[1] - '0';
  r.file = {};
  r.pid.reset();
  r.tid = {};
  r.message = {};
  r.message_start = LogRecord::MessageStart::kLookedAhead;
  r.bracket = 0;
  const char* p = s.data();
  const std::size_t n = s.size();
  // file, up to the next ':'
  // ROCclr pads the file name to 25 columns ("%-25s"): the colon is at 28 unless the name is longer.
  std::size_t i;
  if (n > 28 && p[28] == ':' && p[27] == ' ' && no_colon_in_3_to_27(p)) {
    i = 28;
  } else {
    const void* colon = std::memchr(p + 3, ':', n - 3);
    if (!colon) return false;
    i = static_cast<std::size_t>(static_cast<const char*>(colon) - p);
  }
  r.file = std::string_view(p + 3, i - 3);
  // source line number: blanks, digits, blanks, ':'
  ++i;
  if (i + 5 <= n && is_padded_line_number(p + i)) {
    i += 5;
  } else {
    while (i < n && p[i] == ' ') ++i;
    if (i >= n || !is_digit(p[i])) return false;
    i = skip_digits(p, i, n);
    while (i < n && p[i] == ' ') ++i;
    if (i >= n || p[i] != ':') return false;
    ++i;
  }
  // timestamp: digits, optional 'd', optional " us", then ':'; or "(digits)" in very old builds
  while (i < n && p[i] == ' ') ++i;
  const bool paren = i < n && p[i] == '(';
  if (paren) ++i;
  const std::size_t ts = i;
  i = skip_digits(p, i, n);
  if (i == ts) return false;
  if (paren) {
    if (i >= n || p[i] != ')') return false;
    ++i;
  }
  if (i < n && p[i] == 'd') ++i;
  if (i + 3 <= n && p[i] == ' ' && p[i + 1] == 'u' && p[i + 2] == 's') i += 3;
  std::string_view rest;
  if (i < n && p[i] == ':') {
    rest = s.substr(i + 1);
    r.message_start = LogRecord::MessageStart::kAfterColon;
  } else if (paren && i < n && p[i] == ' ') {
    rest = s.substr(i);
  } else {
    return false;
  }
  rest = trim_left(rest);
  // "N : [tid:0x…]" (ROCm 5)
  if (!rest.empty() && is_digit(rest[0])) {
    int pid = 0;
    bool ok = false;
    const char* end = parse_int(rest.data(), rest.data() + rest.size(), pid, ok);
    std::string_view after = trim_left(rest.substr(static_cast<std::size_t>(end - rest.data())));
    if (ok && !after.empty() && after[0] == ':') {
      std::string_view after2 = trim_left(after.substr(1));
      if (!after2.empty() && after2[0] == '[') {
        r.pid = pid;
        rest = after2;
      }
    }
    if (rest[0] != '[') r.message_start = LogRecord::MessageStart::kLookedAhead;
  }
  if (!rest.empty() && rest[0] == '[') {
    // The same bytes up to the first ']' parse the same.
    if (cache && cache->size && rest.size() >= cache->size && equal_bytes(rest.data(), cache->bytes, cache->size)) {
      if (cache->pid) {
        r.pid = cache->pid;
        r.bracket = cache->generation;
      }
      r.tid = rest.substr(cache->tid_offset, cache->tid_size);
      r.message = trim_left(rest.substr(cache->size));
      r.message_start = LogRecord::MessageStart::kAfterBracket;
      return true;
    }
    const std::size_t close = find_byte(rest.data(), 1, rest.size(), ']');
    if (close < rest.size()) {
      std::optional<int> bracket_pid;
      std::string_view who = rest.substr(1, close - 1);
      if (who.size() >= 4 && std::memcmp(who.data(), "pid:", 4) == 0) {
        std::string_view pv = trim_left(who.substr(4));
        int pid = 0;
        bool ok = false;
        const char* end = parse_int(pv.data(), pv.data() + pv.size(), pid, ok);
        if (ok) bracket_pid = r.pid = pid;
        who = pv.substr(static_cast<std::size_t>(end - pv.data()));
        who = trim_left(who);
      }
      if (who.size() >= 4 && std::memcmp(who.data(), "tid:", 4) == 0) who = trim_left(who.substr(4));
      r.tid = trim_right(who);
      if (cache && close + 1 <= BracketCache::kMaxBytes) {
        cache->size = close + 1;
        std::memcpy(cache->bytes, rest.data(), close + 1);
        cache->pid = bracket_pid;
        cache->tid_offset = static_cast<std::size_t>(r.tid.data() - rest.data());
        cache->tid_size = r.tid.size();
        if (bracket_pid) r.bracket = ++cache->generation;
      }
      rest = rest.substr(close + 1);
      r.message_start = LogRecord::MessageStart::kAfterBracket;
    } else {
      r.message_start = LogRecord::MessageStart::kLookedAhead;
    }
  }
  r.message = trim_left(rest);
  return true;
}

}  // namespace gpreempt::logs::detail
