// parse_record's bracket cache: a record whose "[…]" bracket repeats the previous one byte for
// byte reuses its parse, and must give exactly what a parse without the cache gives.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include <random>
#include <string>
#include <vector>

#include "logs/log_record.h"

using namespace gpreempt::logs::detail;

namespace {

void expect_same(const std::string& line, const LogRecord& a, bool a_ok, const LogRecord& b, bool b_ok) {
  ASSERT_EQ(a_ok, b_ok) << line;
  if (!a_ok) return;
  EXPECT_EQ(a.level, b.level) << line;
  EXPECT_EQ(a.file, b.file) << line;
  EXPECT_EQ(a.pid, b.pid) << line;
  EXPECT_EQ(a.tid, b.tid) << line;
  EXPECT_EQ(a.message, b.message) << line;
  EXPECT_EQ(a.message.data(), b.message.data()) << line;
  EXPECT_EQ(a.message_start, b.message_start) << line;
}

}  // namespace

TEST(LogRecordParse, BracketCacheGivesWhatAParseWithoutItGives) {
  const std::vector<std::string> prefixes = {
      ":3:rocvirtual.cpp           :3351: 6306362974 us: ", ":4:a.cpp :1 : 1 us: ", ":3:x.cpp :2 : 5d: ",
      ":3:rocvirtual.cpp           :891 : 117659918644 us: 8088 : ", ":3:a.cpp :1 : 1 us: 9 : ", ":3:a.cpp :1 : 1 us: 12 "};
  const std::vector<std::string> brackets = {
      "[pid:459769 tid: 0x7f8edc1c4400]", "[pid:459769 tid: 0x7f8edc1c4401]", "[pid:145680 tid:0x7fffed309180]",
      "[tid:0x14b2015e9700]", "[0x14b2015e9700]", "[pid:x tid:0x1]", "[pid:-1 tid:]", "[]", "[pid:99999999999 tid:0x1]",
      "[pid:7 tid:0x1 ]", "[pid:7 tid:0x1", "[" + std::string(70, 'a') + "]", ""};
  const std::vector<std::string> messages = {"ShaderName : k", " hipMalloc ( 1 )", "", "]x", "  [pid:1 tid:0x2] again"};
  std::mt19937 rng(3);
  BracketCache cache;
  // LogRecord::bracket: records with the same nonzero value have the same pid and tid.
  std::map<std::uint64_t, std::pair<std::optional<int>, std::string>> by_bracket;
  for (int i = 0; i < 20000; ++i) {
    // Runs of the same bracket, as a thread's consecutive records have.
    const std::string& bracket = brackets[(i / 3 + rng() % 2) % brackets.size()];
    const std::string line = prefixes[rng() % prefixes.size()] + bracket + " " + messages[rng() % messages.size()];
    LogRecord with, without;
    const bool ok_with = parse_record(line, with, &cache);
    const bool ok_without = parse_record(line, without);
    expect_same(line, with, ok_with, without, ok_without);
    if (ok_with && with.bracket != 0) {
      const auto [it, inserted] = by_bracket.try_emplace(with.bracket, with.pid, std::string(with.tid));
      EXPECT_EQ(it->second, std::make_pair(with.pid, std::string(with.tid))) << line;
    }
    if (HasFailure()) return;
  }
}

TEST(LogRecordParse, Rocm5PidIsKeptWhenTheBracketComesFromTheCache) {
  BracketCache cache;
  LogRecord r;
  ASSERT_TRUE(parse_record(":3:a.cpp :1 : 1 us: 8088 : [tid:0x1] a", r, &cache));
  EXPECT_EQ(r.pid, 8088);
  ASSERT_TRUE(parse_record(":3:a.cpp :1 : 1 us: [tid:0x1] b", r, &cache));
  EXPECT_FALSE(r.pid.has_value());
  EXPECT_EQ(r.tid, "0x1");
  ASSERT_TRUE(parse_record(":3:a.cpp :1 : 1 us: 9 : [tid:0x1] c", r, &cache));
  EXPECT_EQ(r.pid, 9);
  EXPECT_EQ(r.message, "c");
  EXPECT_EQ(r.bracket, 0u);  // the pid did not come from the bracket, so it does not identify it
}
