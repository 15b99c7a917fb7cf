// byte_scan.h's short-span primitives against the obvious loops, at every length and offset that
// crosses their 16-byte steps.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "logs/byte_scan.h"

using namespace gpreempt::logs::detail;

TEST(LogByteScan, FindByteMatchesALoopAtEveryOffset) {
  std::mt19937 rng(1);
  for (int round = 0; round < 200; ++round) {
    std::string s(1 + rng() % 100, 'a');
    for (char& c : s) c = "ab]\x1b"[rng() % 4];
    for (std::size_t from = 0; from <= s.size(); ++from) {
      std::size_t want = from;
      while (want < s.size() && s[want] != ']') ++want;
      ASSERT_EQ(find_byte(s.data(), from, s.size(), ']'), want) << s << " from " << from;
    }
  }
}

TEST(LogByteScan, FindFirstOfMatchesALoopAtEveryOffset) {
  std::mt19937 rng(2);
  for (int round = 0; round < 300; ++round) {
    std::string s(1 + rng() % 100, 'a');
    for (char& c : s) c = "aaaab :("[rng() % 8];
    for (std::size_t from = 0; from <= s.size(); ++from) {
      std::size_t want = from;
      while (want < s.size() && s[want] != ' ' && s[want] != ':' && s[want] != '(') ++want;
      ASSERT_EQ(find_first_of(s.data(), from, s.size(), ' ', ':', '('), want) << s << " from " << from;
    }
  }
}

TEST(LogByteScan, EqualBytesMatchesMemcmpForEveryLengthAndDifferingByte) {
  for (std::size_t n = 0; n <= 70; ++n) {
    const std::string a(n, 'x');
    EXPECT_TRUE(equal_bytes(a.data(), a.data(), n)) << n;
    for (std::size_t at = 0; at < n; ++at) {
      std::string b = a;
      b[at] = 'y';
      EXPECT_FALSE(equal_bytes(a.data(), b.data(), n)) << "length " << n << " differing at " << at;
      EXPECT_TRUE(equal_bytes(a.data(), b.data(), at)) << "length " << at << " before the difference";
    }
  }
}
