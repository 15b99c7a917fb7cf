// libFuzzer target: the HIP log line reader (lib/logs/line_scan.h). for_each_line must split any
// bytes into exactly the '\n'-terminated lines and report each line's ESC / glue-colon bytes as a
// byte-by-byte reference does; every instruction set's block classifier must agree with the
// scalar one. Any difference traps.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "logs/line_scan.h"
#include "logs/log_record.h"

using namespace gpreempt::logs::detail;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Line {
  std::size_t begin, end, first, last, count;
};

std::vector<Line> reference(std::string_view s) {
  std::vector<Line> lines;
  std::size_t begin = 0;
  for (std::size_t nl = s.find('\n'); nl != std::string_view::npos; nl = s.find('\n', begin)) {
    const std::string_view line = s.substr(begin, nl - begin);
    Line l{begin, nl, kCleanLine, kCleanLine, 0};
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '\x1b' ||
          (i >= 1 && i + 2 < line.size() && line[i - 1] == ' ' && line[i] == ':' &&
           line[i + 1] >= '0' && line[i + 1] <= '9' && line[i + 2] == ':')) {
        if (l.count == 0) l.first = i;
        l.last = i;
        l.count = l.count < 3 ? l.count + 1 : 3;
      }
    lines.push_back(l);
    begin = nl + 1;
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  const std::string_view s(text, size);
  const std::vector<Line> want = reference(s);
  std::size_t n = 0;
  const std::size_t rest =
      for_each_line(text, size, [&](std::size_t b, std::size_t e, const LineSuspects& sus) {
        check(n < want.size());
        const Line& w = want[n++];
        check(b == w.begin && e == w.end && sus.count == w.count);
        if (w.count) check(sus.first == w.first && sus.last == w.last);
        is_record_start(s.substr(b, e - b));  // must not read past the line
      });
  check(n == want.size());
  check(rest == (want.empty() ? 0 : want.back().end + 1));

  // Every instruction set's classifier against the scalar one, from every block offset < 64.
  const std::size_t blocks = (size + 63) / 64;
  if (blocks == 0 || blocks > 64) return 0;
  std::vector<BlockMasks> ref(blocks), got(blocks);
  check(classify_blocks_with(Isa::kScalar, text, size, 0, blocks, ref.data()));
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    if (!classify_blocks_with(isa, text, size, 0, blocks, got.data())) continue;
    for (std::size_t j = 0; j < blocks; ++j)
      check(got[j].newline == ref[j].newline && got[j].suspect == ref[j].suspect);
  }
  return 0;
}
