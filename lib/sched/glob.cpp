#include "sched/glob.h"

namespace gpreempt::sched {

bool Glob::Token::accepts(char x) const {
  switch (kind) {
    case kChar:
      return x == c;
    case kAny:
      return true;
    case kStar:
      return true;
    case kSet: {
      bool in = false;
      for (auto [lo, hi] : ranges)
        if (lo <= x && x <= hi) in = true;
      return in != negated;
    }
  }
  return false;
}

std::optional<Glob> Glob::parse(std::string_view p, std::string* error) {
  Glob g;
  g.pattern_ = std::string(p);
  auto fail = [&](const std::string& what) {
    if (error) *error = what;
    return std::optional<Glob>();
  };
  if (p.empty()) return fail("empty pattern");
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '*') {
      if (g.tokens_.empty() || g.tokens_.back().kind != Token::kStar)
        g.tokens_.push_back(Token::of(Token::kStar));
    } else if (c == '?') {
      g.tokens_.push_back(Token::of(Token::kAny));
    } else if (c == '\\') {
      if (i + 1 == p.size()) return fail("trailing '\\' at offset " + std::to_string(i));
      g.tokens_.push_back(Token::of(Token::kChar, p[++i]));
    } else if (c == '[') {
      const size_t open = i;
      Token t = Token::of(Token::kSet);
      size_t j = i + 1;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
        t.negated = true;
        ++j;
      }
      bool first = true;
      for (;; first = false) {
        if (j >= p.size()) return fail("unterminated '[' at offset " + std::to_string(open));
        if (p[j] == ']' && !first) break;
        char lo = p[j];
        if (lo == '\\') {
          if (++j >= p.size()) return fail("unterminated '[' at offset " + std::to_string(open));
          lo = p[j];
        }
        char hi = lo;
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
          hi = p[j + 2];
          if (hi < lo)
            return fail(std::string("reversed range '") + lo + "-" + hi + "' at offset " +
                        std::to_string(j));
          j += 2;
        }
        t.ranges.emplace_back(lo, hi);
        ++j;
      }
      i = j;
      g.tokens_.push_back(std::move(t));
    } else {
      g.tokens_.push_back(Token::of(Token::kChar, c));
    }
  }
  return g;
}

bool Glob::literal() const {
  for (const auto& t : tokens_)
    if (t.kind != Token::kChar) return false;
  return true;
}

bool Glob::matches(std::string_view s) const {
  // Greedy with backtracking to the last star: linear for the usual patterns, never exponential.
  size_t ti = 0, si = 0;
  size_t star_t = std::string::npos, star_s = 0;
  while (si < s.size()) {
    if (ti < tokens_.size() && tokens_[ti].kind == Token::kStar) {
      star_t = ti++;
      star_s = si;
    } else if (ti < tokens_.size() && tokens_[ti].accepts(s[si])) {
      ++ti;
      ++si;
    } else if (star_t != std::string::npos) {
      ti = star_t + 1;
      si = ++star_s;
    } else {
      return false;
    }
  }
  while (ti < tokens_.size() && tokens_[ti].kind == Token::kStar) ++ti;
  return ti == tokens_.size();
}

}  // namespace gpreempt::sched
