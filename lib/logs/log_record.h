// One HIP/ROCclr runtime log record (AMD_LOG_LEVEL 1-5): the prefix every ROCclr version prints,
//   ":<level>:<file>:<line>: <timestamp>[d][ us]: <who> <message>"
// where <who> is "[pid:N tid: 0x…]" / "[pid:N tid:0x…]" (ROCm 6+), "N : [tid:0x…]" (ROCm 5),
// "[0x…]" / "[tid:0x…]" (older), or nothing. Internal to lib/logs; parse_record is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpreempt::logs::detail {

struct LogRecord {
  int level = -1;
  std::string_view file;     // as printed, padding included
  std::optional<int> pid;
  std::string_view tid;      // as printed, e.g. "0x7f8edc1c4400"; empty when absent
  std::string_view message;  // leading blanks removed
  // How the parser found where `message` starts, which says whether changing the message (removing
  // its colour codes) could change how the prefix parses:
  //   kAfterBracket  after the "[…]" bracket: it cannot;
  //   kAfterColon    after the timestamp's ':', no bracket: only if the message's first byte
  //                  became a digit or '[' (the parser looks there for ROCm 5's "N : [" or a bracket);
  //   kLookedAhead   anything else (very old "(ts) " timestamps, an unclosed '[', a number that is
  //                  not "N : ["): the parser read into the message, so it may.
  enum class MessageStart : unsigned char { kLookedAhead, kAfterColon, kAfterBracket };
  MessageStart message_start = MessageStart::kLookedAhead;
  // Which fill of the BracketCache gave `pid` and `tid` (0: not one that gave the pid). Records
  // with the same nonzero value have the same pid and tid, which the analyzer then need not compare.
  std::uint64_t bracket = 0;
};

// The last "[pid:N tid:X]" bracket parse_record read and what it held. Consecutive records of a
// thread repeat it byte for byte, and comparing ~35 bytes is cheaper than parsing them again; the
// result is the same with or without a cache.
struct BracketCache {
  static constexpr std::size_t kMaxBytes = 64;
  std::size_t size = 0;  // of `bytes`, '[' to ']' included; 0 when empty
  char bytes[kMaxBytes];
  std::optional<int> pid;  // what the bracket's "pid:" gave, if anything
  std::size_t tid_offset = 0, tid_size = 0;  // where the tid is in the bracket
  std::uint64_t generation = 0;              // fills so far (LogRecord::bracket)
};

// False unless `s` starts with a ROCclr record prefix. (An out-parameter rather than an optional:
// this runs once per log line, and copying the result out of an optional showed in profiles.)
bool parse_record(std::string_view s, LogRecord& out, BracketCache* cache = nullptr);

// True for ":<digit>:" followed by a file-name character: where a record starts.
inline bool is_record_start(std::string_view s, std::size_t i = 0) {
  return s.size() >= i + 4 && s[i] == ':' && s[i + 1] >= '0' && s[i + 1] <= '9' && s[i + 2] == ':' &&
         s[i + 3] != ' ' && s[i + 3] != ':';
}

}  // namespace gpreempt::logs::detail
