#include "discovery/proc_parse.h"

#include <cctype>
#include <charconv>
#include <climits>

#include "common/proc_status.h"
#include "common/text_file.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

std::vector<int> parse_nspid(std::string_view text) {
  std::vector<int> out;
  const auto field = proc_status_field(text, "NSpid");
  if (!field) return out;
  std::string_view rest = *field;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    std::size_t e = 0;
    while (e < rest.size() && rest[e] != ' ' && rest[e] != '\t') ++e;
    if (e == 0) break;
    auto v = detail::parse_signed(rest.substr(0, e));
    if (!v || *v < 0 || *v > INT_MAX) return {};
    out.push_back(static_cast<int>(*v));
    rest.remove_prefix(e);
  }
  return out;
}

std::optional<int> parse_stat_ppid(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  // " <state> <ppid> "
  std::size_t i = 0;
  while (i < rest.size() && rest[i] == ' ') ++i;
  while (i < rest.size() && rest[i] != ' ') ++i;  // state
  while (i < rest.size() && rest[i] == ' ') ++i;
  std::size_t e = i;
  while (e < rest.size() && rest[e] != ' ') ++e;
  auto v = detail::parse_signed(rest.substr(i, e - i));
  if (!v || *v < 0 || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<std::uint64_t> parse_stat_start_time(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  // After "(comm)" come fields 3 (state) onwards: the start time is the 20th of them.
  std::size_t i = 0;
  for (int field = 3;; ++field) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    std::size_t e = i;
    while (e < rest.size() && rest[e] != ' ' && rest[e] != '\n') ++e;
    if (i == e) return std::nullopt;
    if (field == 22) {
      std::uint64_t v = 0;
      for (std::size_t k = i; k < e; ++k) {
        if (rest[k] < '0' || rest[k] > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(rest[k] - '0');
      }
      return v;
    }
    i = e;
  }
}

std::vector<std::string> parse_cmdline(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\0') continue;
    out.emplace_back(text.substr(start, i - start));
    start = i + 1;
  }
  if (start < text.size()) out.emplace_back(text.substr(start));
  return out;
}

std::optional<std::string> container_id_from_cgroup(std::string_view text) {
  std::optional<std::string> found;
  std::size_t run_start = 0, run = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool hex = i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])) &&
                     !std::isupper(static_cast<unsigned char>(text[i]));
    if (hex) {
      if (run == 0) run_start = i;
      ++run;
      continue;
    }
    // A container id is a whole path component (or the id part of "docker-<id>.scope").
    const bool ends_ok = i == text.size() || text[i] == '/' || text[i] == '.' || text[i] == '\n';
    const bool starts_ok = run_start == 0 || text[run_start - 1] == '/' || text[run_start - 1] == '-' ||
                           text[run_start - 1] == ':';
    if (run >= 32 && ends_ok && starts_ok) found = std::string(text.substr(run_start, run));
    run = 0;
  }
  return found;
}

std::optional<std::uint64_t> parse_sysfs_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace {
// A sysfs value: KFD prints these three without a newline, tolerate one anyway.
std::string_view sysfs_value(std::string_view s) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return detail::trim(s);
}
}  // namespace

std::optional<SysfsQueueFiles> parse_sysfs_queue(std::string_view type_text, std::string_view gpuid_text,
                                                 std::string_view size_text) {
  const auto t = detail::parse_signed(sysfs_value(type_text));
  const auto g = parse_sysfs_gpu_id(gpuid_text);
  if (!t || *t < INT_MIN || *t > INT_MAX || !g) return std::nullopt;
  SysfsQueueFiles q;
  q.type = static_cast<int>(*t);
  q.gpu_id = *g;
  q.size = detail::parse_number(sysfs_value(size_text));
  return q;
}

std::optional<std::uint32_t> parse_sysfs_gpu_id(std::string_view gpuid_text) {
  const auto g = detail::parse_number(sysfs_value(gpuid_text));
  if (!g || *g > 0xffffffffull) return std::nullopt;
  return static_cast<std::uint32_t>(*g);
}

std::string sysfs_queue_type_name(std::int64_t code) {
  switch (code) {
    case 0: return "compute";
    case 1: return "sdma";
    case 2: return "hiq";
    case 3: return "sdma_xgmi";
    case 4: return "sdma_xgmi";
    default: return "type " + std::to_string(code);
  }
}

}  // namespace gpreempt::discovery
