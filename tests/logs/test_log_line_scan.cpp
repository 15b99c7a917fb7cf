// The analyzer's one-pass line scanner (line_scan.h) against byte-by-byte references: the block
// classifiers (each instruction set this CPU has) on random bytes at every block offset,
// for_each_line (line bounds, first and last suspect byte, their count) on texts whose patterns
// sit at every offset of a 64-byte block, and the whole analyzer against its slow path (a text fed
// one byte at a time never takes the scanner's fast paths, so both must agree).
#include <gtest/gtest.h>

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "logs/hip_log_analyzer.h"
#include "logs/json.h"
#include "logs/line_scan.h"

using namespace gpreempt::logs;
using namespace gpreempt::logs::detail;

namespace {

// Bytes the scanner cares about, often, among ordinary ones.
std::string random_text(std::mt19937& rng, std::size_t size) {
  static const char kAlphabet[] = "\n\x1b:: 0123456789 a.[]\r\t:";
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kAlphabet - 2);
  std::string s(size, ' ');
  for (char& c : s) c = kAlphabet[pick(rng)];
  return s;
}

struct Line {
  std::size_t begin, end;
  // Offsets in the line of the first and last ESC or glue colon (kCleanLine when none), and how
  // many there are, 3 standing for "3 or more".
  std::size_t first, last, count;
  bool operator==(const Line&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Line& l) {
  return os << "[" << l.begin << ", " << l.end << ") suspects " << static_cast<long long>(l.first) << ".."
            << static_cast<long long>(l.last) << " x" << l.count;
}

std::vector<Line> reference_lines(const std::string& s) {
  std::vector<Line> lines;
  std::size_t begin = 0;
  for (std::size_t nl = s.find('\n'); nl != std::string::npos; nl = s.find('\n', begin)) {
    const std::string line = s.substr(begin, nl - begin);
    Line l{begin, nl, kCleanLine, kCleanLine, 0};
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '\x1b' || (i >= 1 && i + 2 < line.size() && line[i - 1] == ' ' && line[i] == ':' &&
                                line[i + 1] >= '0' && line[i + 1] <= '9' && line[i + 2] == ':')) {
        if (l.count == 0) l.first = i;
        l.last = i;
        l.count = std::min<std::size_t>(3, l.count + 1);
      }
    lines.push_back(l);
    begin = nl + 1;
  }
  return lines;
}

std::vector<Line> scanned_lines(const std::string& s, std::size_t* rest = nullptr) {
  std::vector<Line> lines;
  const std::size_t r = for_each_line(s.data(), s.size(), [&](std::size_t b, std::size_t e, const LineSuspects& x) {
    lines.push_back({b, e, x.first, x.last, x.count});
  });
  if (rest) *rest = r;
  return lines;
}

}  // namespace

TEST(LogLineScan, BlockClassifiersMatchTheByteByByteReference) {
  std::mt19937 rng(7);
  int tested = 0;
  for (const Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    BlockMasks probe;
    if (!classify_blocks_with(isa, "x", 1, 0, 1, &probe)) continue;  // not on this CPU
    ++tested;
    for (int round = 0; round < 300; ++round) {
      const std::string s = random_text(rng, 1 + rng() % 400);
      for (std::size_t first = 0; first < 64 && first < s.size(); ++first) {
        const std::size_t count = (s.size() - first + 63) / 64 + 1;  // one block wholly past the end
        std::vector<BlockMasks> want(count), got(count), chosen(count);
        ASSERT_TRUE(classify_blocks_with(Isa::kScalar, s.data(), s.size(), first, count, want.data()));
        ASSERT_TRUE(classify_blocks_with(isa, s.data(), s.size(), first, count, got.data()));
        classify_blocks(s.data(), s.size(), first, count, chosen.data());
        for (std::size_t j = 0; j < count; ++j) {
          ASSERT_EQ(got[j].newline, want[j].newline) << "isa " << static_cast<int>(isa) << " round " << round
                                                      << " first " << first << " block " << j;
          ASSERT_EQ(got[j].suspect, want[j].suspect) << "isa " << static_cast<int>(isa) << " round " << round
                                                      << " first " << first << " block " << j;
          ASSERT_EQ(chosen[j].newline, want[j].newline) << "round " << round << " first " << first << " block " << j;
          ASSERT_EQ(chosen[j].suspect, want[j].suspect) << "round " << round << " first " << first << " block " << j;
        }
      }
    }
  }
  EXPECT_GE(tested, 1);  // SSE2 at least: every x86-64 has it (other CPUs test the scalar path alone)
}

TEST(LogLineScan, ReferenceMasksMarkEscapesGlueAndNewlinesOnly) {
  std::string s(64, 'x');
  s[0] = ':';   // no byte before it: not glue
  s[5] = '\n';
  s[10] = '\x1b';
  s.replace(20, 4, " :7:");  // glue: the bit is on the colon
  s.replace(30, 4, " :x:");  // not a digit
  s.replace(40, 4, ":7: ");  // no blank before
  s.replace(61, 3, " :7");   // the closing colon would be past the text
  BlockMasks m;
  ASSERT_TRUE(classify_blocks_with(Isa::kScalar, s.data(), s.size(), 0, 1, &m));
  EXPECT_EQ(m.newline, std::uint64_t{1} << 5);
  EXPECT_EQ(m.suspect, (std::uint64_t{1} << 10) | (std::uint64_t{1} << 21));
}

TEST(LogLineScan, LinesAndFlagsMatchTheReferenceForPatternsAtEveryBlockOffset) {
  // Each pattern at every offset 0..63 of the second block, and straddling its end; two suspects in
  // one line (the first counts), and a suspect in a line that ends in a later block.
  const std::vector<std::string> patterns = {"\n", "\x1b", " :3:", " :3:x\n", "\x1b\n", "\n :3:", " :3\n:",
                                             " :3:\x1b", std::string(70, 'c') + "\x1b",
                                             // first and last in different blocks; counts past 3
                                             "\x1b" + std::string(70, 'c') + "\x1b", "\x1b\x1b\x1b\x1b",
                                             " :3: :4:" + std::string(60, 'c') + "\x1b" + std::string(64, 'd') + "\x1b"};
  for (const std::string& p : patterns) {
    for (std::size_t at = 40; at < 64 + 64 + 8; ++at) {
      for (std::size_t tail : {0u, 1u, 2u, 3u, 70u}) {
        std::string s(at, 'a');
        s[20] = '\n';
        s += p + std::string(tail, 'b') + "\n";
        std::size_t rest = 0;
        EXPECT_EQ(scanned_lines(s, &rest), reference_lines(s)) << "pattern at " << at << " tail " << tail;
        EXPECT_EQ(rest, s.size());
      }
    }
  }
}

TEST(LogLineScan, RandomTextsMatchTheReference) {
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::string s = random_text(rng, rng() % 700);
    std::size_t rest = 0;
    const auto got = scanned_lines(s, &rest);
    ASSERT_EQ(got, reference_lines(s)) << "round " << round;
    const std::size_t last = s.rfind('\n');
    ASSERT_EQ(rest, last == std::string::npos ? 0 : last + 1) << "round " << round;
  }
}

TEST(LogLineScan, AnalyzerFastPathAgreesWithItsSlowPathOnDamagedLogs) {
  // Real-looking lines damaged the way pastes and colours damage them: escapes, glued records,
  // CRs, cut lines. Fed whole, clean lines take the fast path; fed a byte at a time, every line
  // is reassembled in the carry buffer and takes the general path.
  const std::vector<std::string> lines = {
      ":3:rocdevice.cpp            :3048: 20159570897 us: [pid:459769 tid: 0x7f8edc1c4400] Created SWq=0x7f8edc1a8000 to map on HWq=0x7f8acd200000 with size 16384 with priority 2, cooperative: 0",
      ":4:rocvirtual.cpp           :1083: 20161701400 us: [pid:459769 tid: 0x7f8edc1c4400] SWq=0x7f8edc1a8000, HWq=0x7f8acd200000, id=1, Dispatch Header = 0xb02 (type=2, barrier=1, acquire=1, release=1), setup=3",
      ":3:rocvirtual.cpp           :3351: 6306362974 us: [pid:459769 tid: 0x7f8edc1c4400] ShaderName : dummy_kernel(int*, int)",
      ":3:hip_memory.cpp           :772 : 20159700715 us: [pid:459769 tid: 0x7f8edc1c4400] \x1b[31mhipMalloc: Returned hipErrorOutOfMemory : \x1b[0m",
      ":3:hip_module.cpp           :662 : 117659918626 us: 8088 : [tid:0x14b2015e9700] hipLaunchKernel ( 0x1 )",
      ":3:rocdevice.cpp            :415 : 578897276813 us:  Initalizing runtime stack, Enumerated GPU agents = 1",
      ":1:rocdevice.cpp            :3339: 2 us: [pid:7 tid:0x1] Unknown Event Type",
      "Memory access fault by GPU node-2 (Agent handle: 0x1) on address 0x7f.",
      ":3:a.cpp :1 : (12) [0x1] ShaderName : old_format",
  };
  const std::vector<std::string> damage = {"\x1b[32m", "\x1b[0m", " :3:b.cpp :2 : 2 us: [pid:1 tid:0x2] ShaderName : g ",
                                           " :4:x", "\r", " : ", "  ", ":1:"};
  std::mt19937 rng(5);
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    std::string l = lines[rng() % lines.size()];
    const unsigned r = rng() % 10;
    if (r < 3) l.insert(rng() % (l.size() + 1), damage[rng() % damage.size()]);
    if (r == 3) l.resize(rng() % (l.size() + 1));
    text += l + "\n";
  }
  const auto whole = to_json(analyze_log(text));
  LogAnalyzer bytewise;
  for (char c : text) bytewise.feed(std::string_view(&c, 1));
  EXPECT_EQ(to_json(bytewise.finish()), whole);
  EXPECT_EQ(whole["lines"], 3000);
}
