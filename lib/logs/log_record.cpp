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

std::optional<LogRecord> parse_record(std::string_view s) {
  if (!is_record_start(s)) return std::nullopt;
  LogRecord r;
  r.level = s[1] - '0';
  // file, up to the next ':'
  std::size_t a = 3;
  std::size_t b = s.find(':', a);
  if (b == std::string_view::npos) return std::nullopt;
  r.file = trim_right(s.substr(a, b - a));
  // source line number, up to the next ':'
  std::size_t c = s.find(':', b + 1);
  if (c == std::string_view::npos) return std::nullopt;
  std::string_view ln = trim_right(trim_left(s.substr(b + 1, c - b - 1)));
  if (ln.empty() || !is_digit(ln[0])) return std::nullopt;
  // timestamp: digits, optional 'd', optional " us", then ':'; or "(digits)" in very old builds
  std::size_t i = c + 1;
  while (i < s.size() && s[i] == ' ') ++i;
  const bool paren = i < s.size() && s[i] == '(';
  if (paren) ++i;
  const std::size_t ts = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == ts) return std::nullopt;
  if (paren) {
    if (i >= s.size() || s[i] != ')') return std::nullopt;
    ++i;
  }
  if (i < s.size() && s[i] == 'd') ++i;
  if (s.compare(i, 3, " us") == 0) i += 3;
  std::string_view rest;
  if (i < s.size() && s[i] == ':') {
    rest = s.substr(i + 1);
  } else if (paren && i < s.size() && s[i] == ' ') {
    rest = s.substr(i);
  } else {
    return std::nullopt;
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
  return r;
}

}  // namespace gpreempt::logs::detail
