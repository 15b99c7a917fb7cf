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

// Offset of the first `c` in p[i, n), or n.
inline std::size_t find_byte(const char* p, std::size_t i, std::size_t n, char c) {
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(c);
  for (; i + 16 <= n; i += 16) {
    const unsigned mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), needle)));
    if (mask) return i + static_cast<std::size_t>(__builtin_ctz(mask));
  }
  if (i < n && n >= 16) {  // the tail: the last 16 bytes, ignoring those before i
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
                              _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16)), needle))) >>
                          (i - (n - 16));
    return mask ? i + static_cast<std::size_t>(__builtin_ctz(mask)) : n;
  }
#endif
  while (i < n && p[i] != c) ++i;
  return i;
}

// Offset of the first of `a`, `b` or `c` in p[i, n), or n.
inline std::size_t find_first_of(const char* p, std::size_t i, std::size_t n, char a, char b, char c) {
#if defined(__SSE2__)
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b), vc = _mm_set1_epi8(c);
  const auto hits = [&](std::size_t at) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    return static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_or_si128(_mm_cmpeq_epi8(x, vb), _mm_cmpeq_epi8(x, vc)))));
  };
  for (; i + 16 <= n; i += 16)
    if (const unsigned mask = hits(i)) return i + static_cast<std::size_t>(__builtin_ctz(mask));
  if (i < n && n >= 16) {  // the tail: the last 16 bytes, ignoring those before i
    const unsigned mask = hits(n - 16) >> (i - (n - 16));
    return mask ? i + static_cast<std::size_t>(__builtin_ctz(mask)) : n;
  }
#endif
  while (i < n && p[i] != a && p[i] != b && p[i] != c) ++i;
  return i;
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
  if (n >= 8) {
    std::uint64_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 8);
    std::memcpy(&y0, b, 8);
    std::memcpy(&x1, a + n - 8, 8);
    std::memcpy(&y1, b + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  if (n >= 4) {
    std::uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 4);
    std::memcpy(&y0, b, 4);
    std::memcpy(&x1, a + n - 4, 4);
    std::memcpy(&y1, b + n - 4, 4);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace gpreempt::logs::detail
