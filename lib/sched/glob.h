// Shell-style globs for the classification rules: `*` any run of characters (`/` included, so
// "*serve*" matches a whole command line and "/kubepods*" a whole cgroup path), `?` one character,
// `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` one of (not one of) a set, `\x` the character x. A pattern
// is checked when parsed, so a bad one is a config error with its line, not a silent non-match.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::sched {

class Glob {
 public:
  // nullopt and *error set ("unterminated '[' at offset 4", ...) for a malformed pattern.
  static std::optional<Glob> parse(std::string_view pattern, std::string* error);

  bool matches(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }
  // True when the pattern has no wildcard: it matches only itself.
  bool literal() const;

 private:
  struct Token {
    enum Kind { kChar, kAny, kStar, kSet };
    Kind kind = kChar;
    char c = 0;
    bool negated = false;
    std::vector<std::pair<char, char>> ranges;  // for kSet
    bool accepts(char x) const;
    static Token of(Kind k, char ch = 0) {
      Token t;
      t.kind = k;
      t.c = ch;
      return t;
    }
  };
  std::string pattern_;
  std::vector<Token> tokens_;
};

}  // namespace gpreempt::sched
