// Finding one byte in, or comparing, short spans (a log line, a bracket, a thread id) without a
// library call per span: log lines are ~100 bytes, where memchr's or memcmp's call and setup cost
// more than the work. Internal to lib/logs.
#pragma once

#include <cstddef>

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
#endif
  while (i < n && p[i] != c) ++i;
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
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace gpreempt::logs::detail
