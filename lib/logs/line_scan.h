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
// [text, text + size) count as NUL, so a block may run past the end. Uses AVX-512BW or AVX2 when
// the CPU has them (chosen once), else SSE2.
void classify_blocks(const char* text, std::size_t size, std::size_t first, std::size_t count, BlockMasks* out);

// Each instruction set's version, for the tests that hold them to the byte-by-byte reference.
// `Isa` names what classify_blocks may choose; classify_blocks_with returns false, doing nothing,
// when this CPU (or this build) lacks it.
enum class Isa { kScalar, kSse2, kAvx2, kAvx512 };
bool classify_blocks_with(Isa isa, const char* text, std::size_t size, std::size_t first, std::size_t count,
                          BlockMasks* out);

// No suspect byte in the line (see for_each_line).
inline constexpr std::size_t kCleanLine = static_cast<std::size_t>(-1);

// A line's suspect bytes, as offsets in the line: the first and the last (kCleanLine both when
// there is none) and how many, where 3 stands for "3 or more". The count and the last one let the
// analyzer recognize ROCm 7's coloured lines ("… \x1b[32m hipMalloc ( … ) \x1b[0m": exactly two
// escapes, at the message's start and end) without searching their message again.
struct LineSuspects {
  std::size_t first = kCleanLine;
  std::size_t last = kCleanLine;
  std::size_t count = 0;  // 0..3
};

// Adds the suspect bits of the 64-byte block at text offset k. (Counting up to 3 with bit tricks:
// a popcount instruction is not in the baseline x86-64 the library is built for, and the library
// call costs more than this.)
inline void add_suspects(LineSuspects& s, std::size_t k, std::uint64_t bits) {
  if (bits == 0) return;
  if (s.count == 0) s.first = k + static_cast<std::size_t>(std::countr_zero(bits));
  s.last = k + 63 - static_cast<std::size_t>(std::countl_zero(bits));
  const std::uint64_t rest = bits & (bits - 1);
  s.count = std::min<std::size_t>(3, s.count + 1 + (rest != 0) + ((rest & (rest - 1)) != 0));
}

// Calls on_line(begin, end, suspects) for every '\n'-terminated line of text, in order: the line is
// text[begin, end), '\n' excluded; `suspects` says where its ESC and " :<digit>:" bytes are (of
// the latter, the colon). Neither pattern can span a '\n', so bytes outside the line never matter.
// Returns the offset just past the last '\n' (0 if there is none): where the unterminated rest
// begins.
template <typename OnLine>
std::size_t for_each_line(const char* text, std::size_t size, OnLine&& on_line) {
  constexpr std::size_t kBatch = 64;  // blocks classified per call: 4 KiB of text, 1 KiB of masks
  BlockMasks masks[kBatch];
  std::size_t line_begin = 0;
  LineSuspects pending;  // suspect bytes since line_begin in the blocks passed, as text offsets
  for (std::size_t first = 0; first < size; first += 64 * kBatch) {
    const std::size_t count = std::min(kBatch, (size - first + 63) / 64);
    classify_blocks(text, size, first, count, masks);
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t k = first + 64 * j;
      std::uint64_t newlines = masks[j].newline, suspect = masks[j].suspect;
      while (newlines) {
        const std::uint64_t before = (newlines & (~newlines + 1)) - 1;  // bits below the lowest '\n'
        const std::size_t end = k + static_cast<std::size_t>(std::countr_zero(newlines));
        if ((suspect & before) == 0 && pending.count == 0) {
          on_line(line_begin, end, LineSuspects{});
        } else {
          LineSuspects s = pending;
          add_suspects(s, k, suspect & before);
          on_line(line_begin, end, LineSuspects{s.first - line_begin, s.last - line_begin, s.count});
          pending = LineSuspects{};
          suspect &= ~before;
        }
        line_begin = end + 1;
        newlines &= newlines - 1;
      }
      if (suspect != 0) add_suspects(pending, k, suspect);
    }
  }
  return line_begin;
}

}  // namespace gpreempt::logs::detail
