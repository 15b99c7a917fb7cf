// One HIP/ROCclr runtime log record (AMD_LOG_LEVEL 1-5): the prefix every ROCclr version prints,
//   ":<level>:<file>:<line>: <timestamp>[d][ us]: <who> <message>"
// where <who> is "[pid:N tid: 0x…]" / "[pid:N tid:0x…]" (ROCm 6+), "N : [tid:0x…]" (ROCm 5),
// "[0x…]" / "[tid:0x…]" (older), or nothing. Internal to lib/logs; parse_record is pure.
#pragma once

#include <optional>
#include <string_view>

namespace gpreempt::logs::detail {

struct LogRecord {
  int level = -1;
  std::string_view file;
  std::optional<int> pid;
  std::string_view tid;      // as printed, e.g. "0x7f8edc1c4400"; empty when absent
  std::string_view message;  // leading blanks removed
};

// nullopt unless `s` starts with a ROCclr record prefix.
std::optional<LogRecord> parse_record(std::string_view s);

// True for ":<digit>:" followed by a file-name character: where a record starts.
inline bool is_record_start(std::string_view s, std::size_t i = 0) {
  return s.size() >= i + 4 && s[i] == ':' && s[i + 1] >= '0' && s[i + 1] <= '9' && s[i + 2] == ':' &&
         s[i + 3] != ' ' && s[i + 3] != ':';
}

}  // namespace gpreempt::logs::detail
