#include "logs/line_scan.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GPREEMPT_LOGS_AVX2 1  // compiled in always, used only where the CPU has it
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpreempt::logs::detail {

namespace {

bool is_glue_at(const char* p) {
  return p[-1] == ' ' && p[0] == ':' && p[1] >= '0' && p[1] <= '9' && p[2] == ':';
}

BlockMasks classify_block_scalar(const char* p) {
  BlockMasks m;
  for (unsigned i = 0; i < 64; ++i) {
    if (p[i] == '\n') m.newline |= std::uint64_t{1} << i;
    if (p[i] == '\x1b' || is_glue_at(p + i)) m.suspect |= std::uint64_t{1} << i;
  }
  return m;
}

// A block reads one byte before it and two after it (the glue pattern's neighbours). Blocks
// that would read outside the text get a NUL-padded copy in `pad`. Returns where the block's first
// byte is.
[[gnu::always_inline]] inline const char* block_bytes(const char* text, std::size_t size, std::size_t k, char (&pad)[1 + 64 + 2]) {
  if (k >= 1 && k + 66 <= size) return text + k;
  std::memset(pad, 0, sizeof pad);
  const std::size_t from = k >= 1 ? k - 1 : 0, to = std::min(k + 66, size);
  if (from < to) std::memcpy(pad + (from + 1 - k), text + from, to - from);
  return pad + 1;
}

#if defined(__SSE2__)
BlockMasks classify_block_sse2(const char* p) {
  const __m128i newline = _mm_set1_epi8('\n'), esc = _mm_set1_epi8('\x1b'), colon = _mm_set1_epi8(':'),
                blank = _mm_set1_epi8(' '), zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
  BlockMasks m;
#pragma GCC unroll 4
  for (unsigned lane = 0; lane < 4; ++lane) {
    const char* q = p + 16 * lane;
    const __m128i cur = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i prev = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q - 1));
    const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 1));
    const __m128i next2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 2));
    // A digit is a byte whose value minus '0', as an unsigned byte, is at most 9.
    const __m128i d = _mm_sub_epi8(next, zero);
    const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d);
    const __m128i glue = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(prev, blank), _mm_cmpeq_epi8(cur, colon)),
                                       _mm_and_si128(digit, _mm_cmpeq_epi8(next2, colon)));
    const __m128i suspect = _mm_or_si128(_mm_cmpeq_epi8(cur, esc), glue);
    m.newline |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(cur, newline)))}
                 << (16 * lane);
    m.suspect |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(suspect))} << (16 * lane);
  }
  return m;
}
#endif

#if defined(GPREEMPT_LOGS_AVX2)
// The same on 32-byte lanes: half the instructions, and this pass touches every byte of the log.
__attribute__((target("avx2"))) BlockMasks classify_block_avx2(const char* p) {
  const __m256i newline = _mm256_set1_epi8('\n'), esc = _mm256_set1_epi8('\x1b'), colon = _mm256_set1_epi8(':'),
                blank = _mm256_set1_epi8(' '), zero = _mm256_set1_epi8('0'), nine = _mm256_set1_epi8(9);
  BlockMasks m;
#pragma GCC unroll 2
  for (unsigned lane = 0; lane < 2; ++lane) {
    const char* q = p + 32 * lane;
    const __m256i cur = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i prev = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q - 1));
    const __m256i next = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 1));
    const __m256i next2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 2));
    const __m256i d = _mm256_sub_epi8(next, zero);
    const __m256i digit = _mm256_cmpeq_epi8(_mm256_min_epu8(d, nine), d);
    const __m256i glue =
        _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(prev, blank), _mm256_cmpeq_epi8(cur, colon)),
                         _mm256_and_si256(digit, _mm256_cmpeq_epi8(next2, colon)));
    const __m256i suspect = _mm256_or_si256(_mm256_cmpeq_epi8(cur, esc), glue);
    m.newline |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(cur, newline)))}
                 << (32 * lane);
    m.suspect |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(suspect))} << (32 * lane);
  }
  return m;
}

__attribute__((target("avx2"))) void classify_blocks_avx2(const char* text, std::size_t size, std::size_t first,
                                                          std::size_t count, BlockMasks* out) {
  char pad[1 + 64 + 2];
  for (std::size_t j = 0; j < count; ++j) out[j] = classify_block_avx2(block_bytes(text, size, first + 64 * j, pad));
}

// A whole block per instruction, and the compares yield the bit masks directly: a third of the
// AVX2 version's instructions.
__attribute__((target("avx512f,avx512bw"))) BlockMasks classify_block_avx512(const char* p) {
  const __m512i cur = _mm512_loadu_si512(p), prev = _mm512_loadu_si512(p - 1), next = _mm512_loadu_si512(p + 1),
                next2 = _mm512_loadu_si512(p + 2);
  const __m512i colon = _mm512_set1_epi8(':');
  __mmask64 glue = _mm512_cmpeq_epi8_mask(cur, colon);
  glue = _mm512_mask_cmpeq_epi8_mask(glue, prev, _mm512_set1_epi8(' '));
  glue = _mm512_mask_cmpeq_epi8_mask(glue, next2, colon);
  glue = _mm512_mask_cmplt_epu8_mask(glue, _mm512_sub_epi8(next, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
  BlockMasks m;
  m.newline = _mm512_cmpeq_epi8_mask(cur, _mm512_set1_epi8('\n'));
  m.suspect = glue | _mm512_cmpeq_epi8_mask(cur, _mm512_set1_epi8('\x1b'));
  return m;
}

__attribute__((target("avx512f,avx512bw"))) void classify_blocks_avx512(const char* text, std::size_t size,
                                                                        std::size_t first, std::size_t count,
                                                                        BlockMasks* out) {
  char pad[1 + 64 + 2];
  for (std::size_t j = 0; j < count; ++j)
    out[j] = classify_block_avx512(block_bytes(text, size, first + 64 * j, pad));
}
#endif  // GPREEMPT_LOGS_AVX2

void classify_blocks_scalar(const char* text, std::size_t size, std::size_t first, std::size_t count,
                            BlockMasks* out) {
  char pad[1 + 64 + 2];
  for (std::size_t j = 0; j < count; ++j) out[j] = classify_block_scalar(block_bytes(text, size, first + 64 * j, pad));
}

void classify_blocks_sse2(const char* text, std::size_t size, std::size_t first, std::size_t count,
                          BlockMasks* out) {
#if defined(__SSE2__)
  char pad[1 + 64 + 2];
  for (std::size_t j = 0; j < count; ++j) out[j] = classify_block_sse2(block_bytes(text, size, first + 64 * j, pad));
#else
  classify_blocks_scalar(text, size, first, count, out);
#endif
}

using ClassifyBlocks = void (*)(const char*, std::size_t, std::size_t, std::size_t, BlockMasks*);

// The version for `isa`, or nullptr when this build or CPU lacks it.
ClassifyBlocks classifier_for(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return classify_blocks_scalar;
    case Isa::kSse2:
      return classify_blocks_sse2;
#if defined(GPREEMPT_LOGS_AVX2)
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") ? classify_blocks_avx2 : nullptr;
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") ? classify_blocks_avx512 : nullptr;
#else
    case Isa::kAvx2:
    case Isa::kAvx512:
      return nullptr;
#endif
  }
  return nullptr;
}

ClassifyBlocks pick_classify_blocks() {
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2})
    if (ClassifyBlocks f = classifier_for(isa)) return f;
  return classify_blocks_sse2;
}

}  // namespace

bool classify_blocks_with(Isa isa, const char* text, std::size_t size, std::size_t first, std::size_t count,
                          BlockMasks* out) {
  const ClassifyBlocks f = classifier_for(isa);
  if (!f) return false;
  f(text, size, first, count, out);
  return true;
}

void classify_blocks(const char* text, std::size_t size, std::size_t first, std::size_t count, BlockMasks* out) {
  static const ClassifyBlocks chosen = pick_classify_blocks();
  chosen(text, size, first, count, out);
}

}  // namespace gpreempt::logs::detail
