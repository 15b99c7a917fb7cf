#include "logs/log_record.h"

#include <charconv>
#include <cstring>

namespace gpreempt::logs::detail {

namespace {
std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}
std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

// Hand-rolled: this runs once per log line and the fields are short, so byte loops beat
// repeated memchr calls (see bench/logs).
bool parse_record(std::string_view s, LogRecord& r) {
  if (!is_record_start(s)) return false;
  r = LogRecord{};
  r.level = s[1] - '0';
  const char* p = s.data();
  const std::size_t n = s.size();
  // file, up to the next ':'
  // ROCclr pads the file name to 25 columns ("%-25s"): the colon is at 28 unless the name is longer.
  std::size_t i;
  if (n > 28 && p[28] == ':' && p[27] == ' ') {
    i = 28;
  } else {
    const void* colon = std::memchr(p + 3, ':', n - 3);
    if (!colon) return false;
    i = static_cast<std::size_t>(static_cast<const char*>(colon) - p);
  }
  r.file = std::string_view(p + 3, i - 3);
  // source line number: blanks, digits, blanks, ':'
  ++i;
  while (i < n && p[i] == ' ') ++i;
  if (i >= n || !is_digit(p[i])) return false;
  while (i < n && is_digit(p[i])) ++i;
  while (i < n && p[i] == ' ') ++i;
  if (i >= n || p[i] != ':') return false;
  ++i;
  // timestamp: digits, optional 'd', optional " us", then ':'; or "(digits)" in very old builds
  while (i < n && p[i] == ' ') ++i;
  const bool paren = i < n && p[i] == '(';
  if (paren) ++i;
  const std::size_t ts = i;
  while (i < n && is_digit(p[i])) ++i;
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
  } else if (paren && i < n && p[i] == ' ') {
    rest = s.substr(i);
  } else {
    return false;
  }
  rest = trim_left(rest);
  // "N : [tid:0x…]" (ROCm 5)
  if (!rest.empty() && is_digit(rest[0])) {
    std::size_t j = 0;
    int pid = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    j = static_cast<std::size_t>(p - rest.data());
    std::string_view after = trim_left(rest.substr(j));
    if (ec == std::errc() && !after.empty() && after[0] == ':') {
      std::string_view after2 = trim_left(after.substr(1));
      if (!after2.empty() && after2[0] == '[') {
        r.pid = pid;
        rest = after2;
      }
    }
  }
  if (!rest.empty() && rest[0] == '[') {
    const std::size_t close = rest.find(']');
    if (close != std::string_view::npos) {
      std::string_view who = rest.substr(1, close - 1);
      if (who.size() >= 4 && who.compare(0, 4, "pid:") == 0) {
        std::string_view pv = trim_left(who.substr(4));
        int pid = 0;
        auto [p, ec] = std::from_chars(pv.data(), pv.data() + pv.size(), pid);
        if (ec == std::errc()) r.pid = pid;
        who = pv.substr(static_cast<std::size_t>(p - pv.data()));
        who = trim_left(who);
      }
      if (who.size() >= 4 && who.compare(0, 4, "tid:") == 0) who = trim_left(who.substr(4));
      r.tid = trim_right(who);
      rest = rest.substr(close + 1);
    }
  }
  r.message = trim_left(rest);
  return true;
}

}  // namespace gpreempt::logs::detail
