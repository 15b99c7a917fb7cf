// Bad input costs bounded memory and bounded output: a decoder keeps at most kMaxDiagnostics
// diagnostics (then one "N more" entry), quotes at most kExcerptBytes of a line with control bytes
// escaped, and stores at most a fixed number of values whatever the input size.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "common/text_file.h"
#include "discovery/diagnostics.h"
#include "discovery/hqds.h"
#include "discovery/mqds.h"
#include "discovery/properties.h"
#include "discovery/rls.h"

using namespace gpreempt;
using namespace gpreempt::discovery;

namespace {

// What every diagnostic list must look like, whatever the input: bounded count, bounded
// messages, printable ASCII only.
void expect_bounded(const std::vector<Diagnostic>& ds, const char* who) {
  EXPECT_LE(ds.size(), kMaxDiagnostics + 1) << who;
  for (const auto& d : ds) {
    EXPECT_LE(d.message.size(), 4 * kExcerptBytes + 300) << who << ": " << d.message.substr(0, 200);
    for (char c : d.message)
      ASSERT_TRUE(c >= 0x20 && c < 0x7f) << who << ": raw byte " << int(static_cast<unsigned char>(c))
                                         << " in " << d.message.substr(0, 200);
  }
}

// `bytes` of random bytes, newlines among them, and a few very long lines.
std::string garbage(std::size_t bytes, std::uint32_t seed) {
  std::string s(bytes, '\0');
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    std::uint64_t r = rng();
    for (int k = 0; k < 8; ++k, r >>= 8) s[i + k] = static_cast<char>(r & 0xff);
  }
  // Make lines of ~100 bytes in most of it, leave the first 64 KiB as one long line.
  for (std::size_t i = 65536; i < bytes; i += 1 + rng() % 200) s[i] = '\n';
  return s;
}

}  // namespace

TEST(DiagnosticText, ControlAndNonAsciiBytesAreEscaped) {
  const std::string raw = std::string("a\x1b[2J") + '\0' + "b\t\r\n\"\\" + "\x7f\xff" + "z";
  EXPECT_EQ(escaped(raw), "a\\x1b[2J\\0b\\t\\r\\n\\\"\\\\\\x7f\\xffz");
  EXPECT_EQ(quote_line("plain"), "\"plain\"");
  EXPECT_EQ(quote_line("plain", true), "\"plain\"...");
}

TEST(DiagnosticText, QuotesAtMostAnExcerptOfALongLine) {
  const std::string line(5000, 'x');
  const std::string q = quote_line(line);
  EXPECT_EQ(q, "\"" + std::string(kExcerptBytes, 'x') + "\"...");
  EXPECT_EQ(escaped(line, 10), std::string(10, 'x'));
}

TEST(DiagnosticSinkBound, KeepsTheFirstProblemsAndCountsTheRest) {
  DiagnosticSink sink("f");
  for (std::size_t i = 1; i <= kMaxDiagnostics + 5; ++i) sink.add(i, "problem " + std::to_string(i));
  EXPECT_EQ(sink.count(), kMaxDiagnostics + 5);
  auto ds = sink.take();
  ASSERT_EQ(ds.size(), kMaxDiagnostics + 1);
  EXPECT_EQ(ds[0].message, "problem 1");
  EXPECT_EQ(ds[kMaxDiagnostics - 1].line, kMaxDiagnostics);
  EXPECT_EQ(ds.back().omitted, 5u);
  EXPECT_EQ(ds.back().to_string(), "f: 5 more problem(s) not shown (only the first 20 are listed)");
  EXPECT_EQ(problem_count(ds), kMaxDiagnostics + 5);
}

TEST(DiagnosticSinkBound, FewProblemsAreListedWithoutASummary) {
  DiagnosticSink sink("f");
  for (std::size_t i = 1; i <= kMaxDiagnostics; ++i) sink.add(i, "p");
  auto ds = sink.take();
  EXPECT_EQ(ds.size(), kMaxDiagnostics);
  EXPECT_EQ(problem_count(ds), kMaxDiagnostics);
}

// 50 MB of random bytes through every decoder, in memory: bounded diagnostics, nothing stored
// that grows with the input, every problem still counted.
TEST(DecoderMemoryBound, FiftyMegabytesOfGarbage) {
  const std::string g = garbage(50u << 20, 7);
  auto p = decode_properties(g, "g");
  expect_bounded(p.diagnostics, "properties");
  EXPECT_FALSE(p.complete);
  EXPECT_LE(p.properties.size(), kMaxPropertyKeys);
  EXPECT_GT(problem_count(p.diagnostics), 100000u);

  auto m = decode_mqds(g, "g");
  expect_bounded(m.diagnostics, "mqds");
  EXPECT_FALSE(m.complete);
  EXPECT_GT(problem_count(m.diagnostics), 100000u);

  auto h = decode_hqds(g, "g");
  expect_bounded(h.diagnostics, "hqds");
  EXPECT_FALSE(h.complete);

  auto r = decode_rls(g, "g");
  expect_bounded(r.diagnostics, "rls");
  EXPECT_FALSE(r.complete);
}

TEST(DecoderMemoryBound, AHugeLineIsCutAndQuotedShort) {
  const std::string line = std::string(10u << 20, 'k') + " 1\n";
  auto p = decode_properties(line, "g");
  ASSERT_EQ(p.diagnostics.size(), 2u);  // the line, then "no simd_count"
  EXPECT_NE(p.diagnostics[0].message.find("line longer than 4096 bytes"), std::string::npos);
  expect_bounded(p.diagnostics, "properties");
  EXPECT_TRUE(p.properties.empty());
}

TEST(DecoderMemoryBound, PropertiesKeepAtMostTheKeyLimit) {
  std::string text = "simd_count 0\n";
  for (int i = 0; i < 100000; ++i) text += "key_" + std::to_string(i) + " " + std::to_string(i) + "\n";
  auto p = decode_properties(text, "p");
  EXPECT_EQ(p.properties.size(), kMaxPropertyKeys);
  EXPECT_FALSE(p.complete);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_NE(p.diagnostics[0].message.find("more than 512 keys"), std::string::npos);
  // A key longer than any kernel key is a malformed line, not a key to store.
  auto q = decode_properties("simd_count 0\n" + std::string(65, 'a') + " 1\n", "q");
  EXPECT_EQ(q.properties.size(), 1u);
  EXPECT_FALSE(q.complete);
}

TEST(DecoderMemoryBound, AnEndlessMqdDumpStoresOneMqdPerCopy) {
  std::string text = "Process 1 PASID 1:\n  Compute queue on device 1a2b\n";
  char row[128];
  for (unsigned off = 0; off < (1u << 20); off += 32) {
    std::snprintf(row, sizeof row, "    %08x: 00000001 00000002 00000003 00000004 00000005 00000006 00000007 00000008\n", off);
    text += row;
  }
  auto m = decode_mqds(text, "m");
  ASSERT_EQ(m.processes.size(), 1u);
  ASSERT_EQ(m.processes[0].queues.size(), 1u);
  ASSERT_EQ(m.processes[0].queues[0].xcc_copies.size(), 1u);
  EXPECT_EQ(m.processes[0].queues[0].xcc_copies[0].dwords.size(), 512u);
  EXPECT_FALSE(m.processes[0].queues[0].xcc_copies[0].complete);
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.diagnostics.size(), 1u);
  EXPECT_NE(m.diagnostics[0].message.find("goes on past the 2048 bytes"), std::string::npos);
}

TEST(DecoderMemoryBound, MqdCopiesPerQueueAreBounded) {
  std::string text = "Process 1 PASID 1:\n  Compute queue on device 1a2b\n";
  std::string copy;
  char row[128];
  for (unsigned off = 0; off < 2048; off += 32) {
    std::snprintf(row, sizeof row, "    %08x: 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n", off);
    copy += row;
  }
  for (std::size_t i = 0; i < kMaxMqdCopies + 10; ++i) text += copy;
  auto m = decode_mqds(text, "m");
  EXPECT_EQ(m.processes[0].queues[0].xcc_copies.size(), kMaxMqdCopies);
  EXPECT_FALSE(m.complete);
  EXPECT_EQ(problem_count(m.diagnostics), 10u);
}

TEST(DecoderMemoryBound, MqdsStopsAfterTheProcessLimit) {
  std::string text;
  for (std::size_t i = 0; i < kMaxMqdsProcesses + 100; ++i) text += "Process 1 PASID 1:\n";
  auto m = decode_mqds(text, "m");
  EXPECT_EQ(m.processes.size(), kMaxMqdsProcesses);
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.diagnostics.size(), 1u);
  EXPECT_NE(m.diagnostics[0].message.find("stopped reading here"), std::string::npos);
  EXPECT_EQ(m.diagnostics[0].line, kMaxMqdsProcesses + 1);
}

TEST(DecoderMemoryBound, HqdsSlotRegistersAreBounded) {
  std::string text = "Node 1, gpu_id 1a2b:\n  SDMA Engine 0, RLC 0\n";
  char row[128];
  for (unsigned addr = 0; addr < 4 * 100000; addr += 32) {
    std::snprintf(row, sizeof row, "    %08x: 00000001 00000002 00000003 00000004 00000005 00000006 00000007 00000008\n", addr);
    text += row;
  }
  auto h = decode_hqds(text, "h");
  ASSERT_EQ(h.nodes.size(), 1u);
  ASSERT_EQ(h.nodes[0].slots.size(), 1u);
  EXPECT_EQ(h.nodes[0].slots[0].registers.size(), kMaxHqdRegisters);
  EXPECT_FALSE(h.complete);
  EXPECT_EQ(problem_count(h.diagnostics), 1u);
}

TEST(DecoderMemoryBound, RlsStopsAfterTheDwordLimit) {
  std::string text = "Node 1, gpu_id 1a2b:\n";
  char row[128];
  for (std::size_t off = 0; off < 4 * (kMaxRlsDwords + 64); off += 32) {
    std::snprintf(row, sizeof row, "  %08zx: c0001000 00000000 c0001000 00000000 c0001000 00000000 c0001000 00000000\n", off);
    text += row;
  }
  auto r = decode_rls(text, "r");
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].ib_dwords, kMaxRlsDwords);
  EXPECT_FALSE(r.complete);
  ASSERT_GE(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("runlist dwords"), std::string::npos);
}
