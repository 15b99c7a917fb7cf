// Finding one byte in, or comparing, short spans (a log line, a bracket, a thread id) without a
// library call per span: log lines are ~100 bytes, where memchr's or memcmp's call and setup cost
// more than the work. Internal to lib/logs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpreempt::logs::detail {

// Offset of the first byte of p[i, n) that `is_hit` accepts, or n. `hits(at)` gives the same
// answer for the 16 bytes at `at` as a bit mask (SSE2); the text's last 16 bytes are read once more,
// overlapping, instead of a byte loop for the tail.
template <typename Hits16, typename IsHit>
[[gnu::always_inline]] inline std::size_t find_first_hit(const char* p, std::size_t i, std::size_t n,
                                                         [[maybe_unused]] Hits16 hits, IsHit is_hit) {
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16)
    if (const unsigned mask = hits(i)) return i + static_cast<std::size_t>(__builtin_ctz(mask));
  if (i < n && n >= 16) {  // the tail: the last 16 bytes, ignoring those before i
    const unsigned mask = hits(n - 16) >> (i - (n - 16));
    return mask ? i + static_cast<std::size_t>(__builtin_ctz(mask)) : n;
  }
#endif
  while (i < n && !is_hit(p[i])) ++i;
  return i;
}

#if defined(__SSE2__)
inline unsigned mask_of(__m128i bytes) { return static_cast<unsigned>(_mm_movemask_epi8(bytes)); }
inline __m128i load16(const char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
#endif

// Offset of the first `c` in p[i, n), or n.
inline std::size_t find_byte(const char* p, std::size_t i, std::size_t n, char c) {
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(c);
  const auto hits = [&](std::size_t at) { return mask_of(_mm_cmpeq_epi8(load16(p + at), needle)); };
#else
  const auto hits = [](std::size_t) { return 0u; };
#endif
  return find_first_hit(p, i, n, hits, [c](char x) { return x == c; });
}

// Offset of the first of `a`, `b` or `c` in p[i, n), or n.
inline std::size_t find_first_of(const char* p, std::size_t i, std::size_t n, char a, char b, char c) {
#if defined(__SSE2__)
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b), vc = _mm_set1_epi8(c);
  const auto hits = [&](std::size_t at) {
    const __m128i x = load16(p + at);
    return mask_of(_mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_or_si128(_mm_cmpeq_epi8(x, vb), _mm_cmpeq_epi8(x, vc))));
  };
#else
  const auto hits = [](std::size_t) { return 0u; };
#endif
  return find_first_hit(p, i, n, hits, [=](char x) { return x == a || x == b || x == c; });
}

// a[0, n) == b[0, n) for sizeof(Word) <= n <= 2 * sizeof(Word): the first and the last word,
// which overlap.
template <typename Word>
inline bool equal_ends(const char* a, const char* b, std::size_t n) {
  Word x0, y0, x1, y1;
  std::memcpy(&x0, a, sizeof(Word));
  std::memcpy(&y0, b, sizeof(Word));
  std::memcpy(&x1, a + n - sizeof(Word), sizeof(Word));
  std::memcpy(&y1, b + n - sizeof(Word), sizeof(Word));
  return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}

// a[0, n) == b[0, n).
inline bool equal_bytes(const char* a, const char* b, std::size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    const auto differ = [&](std::size_t i) {
      return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)),
                                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)))) != 0xffff;
    };
    for (std::size_t i = 0; i + 16 < n; i += 16)
      if (differ(i)) return false;
    return !differ(n - 16);  // the last 16 bytes, overlapping the loop's
  }
#endif
  // Two overlapping words cover 8..16 bytes (thread ids are ~14), two half-words 4..8.
  if (n >= 8) return equal_ends<std::uint64_t>(a, b, n);
  if (n >= 4) return equal_ends<std::uint32_t>(a, b, n);
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace gpreempt::logs::detail
