// Edge cases of the analyzer's fast paths: the 16-byte scan of a message for escapes and glued
// records (a hit at every offset of a block), the 8-byte digit skip, CRLF, and the read buffer of
// analyze_file (records cut by its boundary, a line longer than it, a last line without "\n").
#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>

#include "logs/hip_log_analyzer.h"
#include "logs/json.h"
#include "logs/log_file.h"

using namespace gpreempt::logs;
namespace fs = std::filesystem;

namespace {
const std::string kPrefix = ":3:a.cpp :1 : 1 us: [pid:1 tid:0x1] ";

fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / ("gpreempt_" + name + "_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
}  // namespace

TEST(LogFastPath, GluedRecordFoundAtEveryOffsetOfTheScan) {
  for (std::size_t pad = 0; pad < 40; ++pad) {
    const std::string line = kPrefix + std::string(pad, 'x') + " :3:b.cpp :2 : 2 us: [pid:1 tid:0x1] ShaderName : k\n";
    auto s = analyze_log(line);
    EXPECT_EQ(s.records, 2u) << "pad " << pad;
    EXPECT_EQ(s.recognized, 2u) << "pad " << pad;
    ASSERT_EQ(s.kernels.count("k"), 1u) << "pad " << pad;
    EXPECT_EQ(s.kernels.at("k"), 1u);
  }
}

TEST(LogFastPath, EscapeFoundAtEveryOffsetOfTheScan) {
  for (std::size_t pad = 0; pad < 40; ++pad) {
    const std::string x(pad, 'x');
    auto s = analyze_log(kPrefix + "hipMalloc: Returned hipErrorOutOfMemory : " + x + "\x1b[0m\n");
    ASSERT_EQ(s.errors.size(), 1u) << "pad " << pad;
    const std::string expected = kPrefix + "hipMalloc: Returned hipErrorOutOfMemory :" + (pad ? " " + x : "");
    EXPECT_EQ(s.errors[0].text, expected) << "pad " << pad;
    EXPECT_EQ(s.errors[0].line, 1u);
  }
}

TEST(LogFastPath, ReturnLinesAreRecognizedRightAfterTheFunctionName) {
  // ROCclr prints "<function>: Returned <code> : …". Names of every length around the 16-byte
  // scan, codes of several lengths; a ": Returned " anywhere else (an entry line's arguments, after
  // other text) is not a return.
  for (std::size_t pad = 0; pad < 40; ++pad) {
    for (const std::string code : {"E", "hipErrorX", "hipErrorInvalidValue : duration: 7 us"}) {
      const std::string api = "hip" + std::string(pad, 'x');
      auto s = analyze_log(kPrefix + api + ": Returned " + code + "\n" + kPrefix + api + ": Returned hipSuccess : \n" +
                           kPrefix + api + ": Returned\n" + kPrefix + api + " ( \"x: Returned " + code + "\" )\n" +
                           kPrefix + api + ": Rx : Returned " + code + "\n" + kPrefix + api + "(: Returned " + code + "\n");
      ASSERT_EQ(s.errors.size(), 1u) << "pad " << pad << " code " << code;
      EXPECT_EQ(s.errors[0].line, 1u);
      EXPECT_EQ(s.recognized, 6u);
    }
  }
}

TEST(LogFastPath, FaultPhrasesFoundAtEveryOffsetOfTheScan) {
  // The pre-filter looks for the phrases' first two bytes sixteen offsets at a time; a phrase at
  // any offset, including across its blocks and in the scalar tail, still makes an error.
  for (std::size_t pad = 0; pad < 40; ++pad) {
    for (const std::string phrase :
         {"Memory access fault by GPU node-2", "Memory Fault Error", "aborting with error", "HSA_STATUS_ERROR"}) {
      const std::string filler(pad, 'x');
      auto s = analyze_log(kPrefix + "Callback: Queue 0x1 " + filler + phrase + "\n" + kPrefix + "Command " + filler +
                           phrase + "\n" + kPrefix + "Command " + filler + "Memory Fault\n");
      ASSERT_EQ(s.errors.size(), 2u) << "pad " << pad << " " << phrase;
      EXPECT_EQ(s.errors[1].line, 2u);
    }
  }
}

TEST(LogFastPath, EscapeInTheMiddleOfAMessage) {
  auto s = analyze_log(kPrefix + "ShaderName : \x1b[1mbold_kernel\x1b[0m(int)\n" + kPrefix +
                       "hipMemcpy: Returned \x1b[31mhipErrorInvalidValue\x1b[0m : \n" + kPrefix +
                       "hipFree: Returned \x1b[32mhipSuccess\x1b[0m : \n");
  EXPECT_EQ(s.kernels.at("bold_kernel(int)"), 1u);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].text, kPrefix + "hipMemcpy: Returned hipErrorInvalidValue :");
  EXPECT_EQ(s.errors[0].line, 2u);
  EXPECT_EQ(s.recognized, 3u);
}

TEST(LogFastPath, BlankColonThatStartsNoRecordStaysInTheMessage) {
  // " :3: " (blank after the level) and " :3:nofile" (no file extension) are not record starts.
  for (std::size_t pad = 0; pad < 20; ++pad) {
    const std::string name = "k" + std::string(pad, 'y') + " :3: a :3:nofile :";
    auto s = analyze_log(kPrefix + "ShaderName : " + name + "\n");
    EXPECT_EQ(s.records, 1u) << "pad " << pad;
    EXPECT_EQ(s.kernels.at(name), 1u) << "pad " << pad;
  }
}

TEST(LogFastPath, CrlfLinesGiveTheSameSummaryAsLf) {
  const std::string lf = kPrefix + "Created SWq=0x10 to map on HWq=0x20 with size 4096 with priority 1, cooperative: 0\n" +
                         kPrefix + "SWq=0x10, HWq=0x20, id=3, Dispatch Header = 0xb02\n" + kPrefix +
                         "ShaderName : kern\n" + kPrefix + "hipFree: Returned hipErrorInvalidValue : \n";
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const auto a = analyze_log(lf), b = analyze_log(crlf);
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.kernels.at("kern"), 1u);
  ASSERT_EQ(b.hw_queues.size(), 1u);
  EXPECT_EQ(b.hw_queues[0].size.value(), 4096u);
  EXPECT_EQ(b.hw_queues[0].dispatches, 1u);
  ASSERT_EQ(b.errors.size(), 1u);
  EXPECT_EQ(b.errors[0].text.back(), ':');
}

TEST(LogFastPath, DigitRunsOfEveryLength) {
  for (std::size_t len = 1; len <= 24; ++len) {
    const std::string digits(len, '7');
    for (const std::string& ts : {digits + " us", digits + "d us", digits, "(" + digits + ")"}) {
      const std::string line = ":3:a.cpp :" + digits + " : " + ts + ": ShaderName : k\n";
      auto s = analyze_log(line);
      EXPECT_EQ(s.recognized, 1u) << line;
    }
  }
  // A non-ASCII byte right after the digits (it carries into the next byte in the 8-byte test).
  for (const char* bad : {"\xfa", "\xff", "/", "9\xfa"}) {
    for (std::size_t len = 1; len <= 12; ++len) {
      const std::string line = ":3:a.cpp :1 : " + std::string(len, '5') + bad + " us: ShaderName : k\n";
      EXPECT_EQ(analyze_log(line).recognized, 0u) << len << " digits then " << bad;
    }
  }
}

TEST(LogFastPath, FileReadBuffersCutRecordsLongLinesAndAnUnterminatedLastLine) {
  std::string text;
  for (int i = 0; text.size() < (1u << 20); ++i)
    text += kPrefix + "SWq=0x10, HWq=0x20, id=" + std::to_string(i % 5) + ", Dispatch Header = 0xb02\r\n" + kPrefix +
            "ShaderName : kern_" + std::to_string(i % 3) + "\n";
  const std::string long_name(300000, 'L');  // longer than one read buffer
  text += kPrefix + "ShaderName : " + long_name + "\n";
  text += kPrefix + "\x1b[31mhipFree: Returned hipErrorInvalidValue : \x1b[0m\n";
  text += kPrefix + "ShaderName : last_without_newline";
  const fs::path path = write_temp("log_fastpath", text);
  const auto whole = analyze_log(text);
  const auto from_file = analyze_file(path.string(), {}, 1);
  fs::remove(path);
  EXPECT_EQ(to_json(from_file), to_json(whole));
  EXPECT_EQ(from_file.kernels.at(long_name), 1u);
  EXPECT_EQ(from_file.kernels.at("last_without_newline"), 1u);
  EXPECT_EQ(from_file.errors_total, 1u);
  EXPECT_FALSE(from_file.truncated_record);
  ASSERT_EQ(from_file.hw_queues.size(), 1u);
  EXPECT_EQ(from_file.hw_queues[0].ids.size(), 5u);
  EXPECT_EQ(from_file.dispatches, from_file.kernels.at("kern_0") + from_file.kernels.at("kern_1") +
                                      from_file.kernels.at("kern_2"));
  EXPECT_EQ(from_file.lines, from_file.records);
  EXPECT_EQ(from_file.lines, 2 * from_file.dispatches + 3);
}

TEST(LogFastPath, PidParsesExactlyLikeFromChars) {
  // The prefix parser reads the pid with its own inlined loop; it must agree with std::from_chars
  // on signs, overflow and missing digits (a pid that does not parse is left out, not guessed).
  for (const std::string v : {"0", "7", "007", "-7", "2147483647", "2147483648", "-2147483648", "-2147483649",
                              "99999999999999999999", "-", "", "+5", "12x"}) {
    auto s = analyze_log(":3:a.cpp :1 : 1 us: [pid:" + v + " tid:0x1] ShaderName : k\n");
    int want = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), want);
    ASSERT_EQ(s.processes.size(), 1u) << v;
    if (ec == std::errc()) {
      EXPECT_EQ(s.processes[0].pid, want) << v;
    } else {
      EXPECT_FALSE(s.processes[0].pid.has_value()) << v;
    }
    if (end == v.data() + v.size() && !v.empty()) {  // digits (of any value) then " tid:"
      EXPECT_EQ(s.processes[0].tids, (std::set<std::string>{"0x1"})) << v;
    }
  }
  // ROCm 5's "N : [tid:…]": an overflowing N is not a pid.
  auto s = analyze_log(":3:a.cpp :1 : 1 us: 99999999999 : [tid:0x1] ShaderName : k\n");
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_FALSE(s.processes[0].pid.has_value());
  s = analyze_log(":3:a.cpp :1 : 1 us: 4242 : [tid:0x1] ShaderName : k\n");
  EXPECT_EQ(s.processes[0].pid, 4242);
}

TEST(LogFastPath, ColourBeforeTheWhoBracketIsStrippedBeforeTheBracketIsRead) {
  // The prefix parses without the escapes only when they follow its "[…]"; here the escape comes
  // first and hides the bracket until it is stripped.
  auto s = analyze_log(":3:devprogram.cpp           :2679: 301282620849 us: \x1b[31m[pid:145680 tid:0x7fff] Using V5.\x1b[0m\n"
                       ":3:devprogram.cpp           :2679: 301282620849 us: \x1b[31m4242 : [tid:0x1] x\x1b[0m\n"
                       ":3:devprogram.cpp           :2679: 301282620849 us: [pid:7 tid:0x2] \x1b[31m[pid:8 tid:0x3] y\x1b[0m\n");
  ASSERT_EQ(s.processes.size(), 3u);
  EXPECT_EQ(s.processes[0].pid, 145680);
  EXPECT_EQ(s.processes[0].tids, (std::set<std::string>{"0x7fff"}));
  EXPECT_EQ(s.processes[1].pid, 4242);
  EXPECT_EQ(s.processes[2].pid, 7);
  EXPECT_EQ(s.processes[2].tids, (std::set<std::string>{"0x2"}));
  // No bracket at all (ROCm 7 without pids): the parsed prefix is kept, the message stripped.
  s = analyze_log(":3:hip_memory.cpp           :788 : 6306365980 us:  \x1b[31mhipFree: Returned hipErrorInvalidValue : \x1b[0m\n"
                  ":3:hip_memory.cpp           :788 : 6306365980 us:  \x1b[32m\x1b[0m\n");
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].text, ":3:hip_memory.cpp           :788 : 6306365980 us:  hipFree: Returned hipErrorInvalidValue :");
  EXPECT_EQ(s.recognized, 2u);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_FALSE(s.processes[0].pid.has_value());
}

TEST(LogFastPath, WholeAndByteAtATimeAgreeAtTheRecordCapAndOnBlankMessages) {
  // The cap applies after a final '\r' is dropped, whichever path the line takes; a message of
  // blanks and '\r's is an empty message.
  AnalyzerOptions o;
  o.max_record_bytes = 100;
  for (const std::string& text :
       {std::string(100, 'x') + "\r\n", std::string(101, 'x') + "\r\n", std::string(99, 'x') + "\r\r\n",
        std::string(":3:f.cpp:7:123: \r\r\n"), std::string(":1:f.cpp:7:123: \t\r\r\n"),
        kPrefix + std::string(200, 'y') + "\r\n"}) {
    const auto whole = analyze_log(text, o);
    LogAnalyzer bytewise(o);
    for (char c : text) bytewise.feed(std::string_view(&c, 1));
    EXPECT_EQ(to_json(bytewise.finish()), to_json(whole)) << text;
  }
  EXPECT_FALSE(analyze_log(std::string(100, 'x') + "\r\n", o).truncated_record);
  EXPECT_TRUE(analyze_log(std::string(101, 'x') + "\r\n", o).truncated_record);
}
