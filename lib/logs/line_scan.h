// Splitting a chunk of log text into lines and, in the same pass, flagging the lines that need the
// analyzer's slow path: those holding an ANSI escape or a glued record (" :<digit>:", where a
// terminal paste joined a second record onto the line). Most lines have neither, and knowing that
// up front saves a second scan of every message. One pass over 64-byte blocks yields a bit per
// byte for '\n' and one for "suspect" bytes; lines are then walked bit by bit, so the cost per
// line is a few bit operations instead of a loop that mispredicts its exit at every line end.
// Internal to lib/logs.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace gpreempt::logs::detail {

struct BlockMasks {
  std::uint64_t newline = 0;  // bit i: byte i is '\n'
  std::uint64_t suspect = 0;  // bit i: byte i is ESC, or bytes i-1..i+2 are " :<digit>:"
};

// The masks of the 64-byte blocks starting at text + first + 64 * j, j < count. Bytes outside
// [text, text + size) count as NUL, so a block may run past the end. Uses AVX2 when the CPU has
// it (chosen once), else SSE2.
void classify_blocks(const char* text, std::size_t size, std::size_t first, std::size_t count, BlockMasks* out);

// The same without AVX2, and byte by byte: the references the tests hold classify_blocks to.
void classify_blocks_sse2(const char* text, std::size_t size, std::size_t first, std::size_t count,
                          BlockMasks* out);
void classify_blocks_scalar(const char* text, std::size_t size, std::size_t first, std::size_t count,
                            BlockMasks* out);

// No suspect byte in the line (see for_each_line).
inline constexpr std::size_t kCleanLine = static_cast<std::size_t>(-1);

// Calls on_line(begin, end, suspect) for every '\n'-terminated line of text, in order: the line is
// text[begin, end), '\n' excluded; `suspect` is the offset in the line of its first ESC or
// " :<digit>:" (of the colon), or kCleanLine when it has neither. Neither pattern can span a '\n',
// so bytes outside the line never matter. Returns the offset just past the last '\n' (0 if there
// is none): where the unterminated rest begins.
template <typename OnLine>
std::size_t for_each_line(const char* text, std::size_t size, OnLine&& on_line) {
  constexpr std::size_t kBatch = 64;  // blocks classified per call: 4 KiB of text, 1 KiB of masks
  BlockMasks masks[kBatch];
  std::size_t line_begin = 0;
  std::size_t pending_suspect = kCleanLine;  // first suspect byte since line_begin, in blocks passed
  for (std::size_t first = 0; first < size; first += 64 * kBatch) {
    const std::size_t count = std::min(kBatch, (size - first + 63) / 64);
    classify_blocks(text, size, first, count, masks);
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t k = first + 64 * j;
      std::uint64_t newlines = masks[j].newline, suspect = masks[j].suspect;
      while (newlines) {
        const std::uint64_t before = (newlines & (~newlines + 1)) - 1;  // bits below the lowest '\n'
        const std::size_t end = k + static_cast<std::size_t>(std::countr_zero(newlines));
        std::size_t at = pending_suspect;
        if (at == kCleanLine && (suspect & before) != 0)
          at = k + static_cast<std::size_t>(std::countr_zero(suspect & before));
        on_line(line_begin, end, at == kCleanLine ? kCleanLine : at - line_begin);
        line_begin = end + 1;
        pending_suspect = kCleanLine;
        suspect &= ~before;
        newlines &= newlines - 1;
      }
      if (suspect != 0 && pending_suspect == kCleanLine)
        pending_suspect = k + static_cast<std::size_t>(std::countr_zero(suspect));
    }
  }
  return line_begin;
}

}  // namespace gpreempt::logs::detail
