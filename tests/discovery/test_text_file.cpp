// lib/common/text_file: user-named inputs are refused with the reason unless they are regular
// files (or stdin), read errors are reported, and FileLines gives exactly the lines TextLines
// gives, in bounded memory, wherever chunk boundaries and over-long lines fall.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/text_file.h"

using namespace gpreempt;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gpreempt_text_file_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return path / name;
  }
};

struct Line {
  std::string text;
  bool cut;
  bool operator==(const Line&) const = default;
};

std::vector<Line> all_lines(LineSource& src) {
  std::vector<Line> out;
  std::string_view l;
  while (src.next(l)) out.push_back({std::string(l), src.line_cut()});
  return out;
}

// The lines by definition: split at "\n", drop one "\r" before it, keep max bytes.
std::vector<Line> reference_lines(const std::string& text, std::size_t max) {
  std::vector<Line> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string l = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    const bool cut = l.size() > max;
    if (cut) l.resize(max);
    out.push_back({l, cut});
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace

TEST(InputFile, ADirectoryIsRefusedWithTheReason) {
  TempDir d;
  InputFile f(d.path.string());
  ASSERT_TRUE(f.error());
  EXPECT_EQ(f.error()->reason, "is a directory");
  EXPECT_EQ(f.error()->message(), "cannot read " + d.path.string() + ": is a directory");
  EXPECT_FALSE(read_text_file(d.path.string()));
  EXPECT_EQ(errno, EISDIR);
}

TEST(InputFile, AFifoIsRefusedWithoutWaitingForAWriter) {
  TempDir d;
  const fs::path fifo = d.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  InputFile f(fifo.string());  // would block forever in a plain open(O_RDONLY)
  ASSERT_TRUE(f.error());
  EXPECT_NE(f.error()->reason.find("is a FIFO"), std::string::npos);
  EXPECT_NE(f.error()->reason.find("standard input"), std::string::npos);
  EXPECT_FALSE(read_text_file(fifo.string()));
}

TEST(InputFile, AMissingFileNamesTheErrno) {
  InputFile f("/nonexistent/gpreempt-file");
  ASSERT_TRUE(f.error());
  EXPECT_EQ(f.error()->error, ENOENT);
  EXPECT_EQ(f.error()->message(), "cannot read /nonexistent/gpreempt-file: No such file or directory");
}

TEST(InputFile, AnUnreadableFileIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file: the read error is tested on /proc/self/mem";
  TempDir d;
  const auto p = d.write("secret", "x\n");
  fs::permissions(p, fs::perms::none);
  InputFile f(p.string());
  ASSERT_TRUE(f.error());
  EXPECT_EQ(f.error()->error, EACCES);
}

TEST(InputFile, AReadErrorHalfWayIsReported) {
  // /proc/self/mem is a regular file whose read at offset 0 (unmapped) fails with EIO.
  InputFile f("/proc/self/mem");
  ASSERT_FALSE(f.error());
  char buf[64];
  EXPECT_EQ(f.read(buf, sizeof buf), 0u);
  ASSERT_TRUE(f.error());
  EXPECT_EQ(f.error()->error, EIO);
  FileLines lines(f);
  std::string_view l;
  EXPECT_FALSE(lines.next(l));
}

TEST(FileLines, SameLinesAsTextLinesAcrossChunksAndCuts) {
  TempDir d;
  std::mt19937 rng(42);
  const std::string alphabet = "ab\r\n\n\n";
  for (int round = 0; round < 40; ++round) {
    std::string text;
    const std::size_t n = rng() % 200000;
    for (std::size_t i = 0; i < n; ++i) {
      // Mostly short lines, sometimes a run without newline across the 64 KiB chunk size.
      text += rng() % 5000 == 0 ? std::string(70000 + rng() % 1000, 'L') : std::string(1, alphabet[rng() % alphabet.size()]);
    }
    const std::size_t max = 1 + rng() % 100;
    const auto p = d.write("t" + std::to_string(round), text);
    InputFile f(p.string());
    ASSERT_FALSE(f.error());
    FileLines fl(f, max);
    TextLines tl(text, max);
    const auto want = reference_lines(text, max);
    ASSERT_EQ(all_lines(fl), want) << "round " << round;
    ASSERT_EQ(all_lines(tl), want) << "round " << round;
    EXPECT_EQ(fl.ended_with_newline(), text.empty() || text.back() == '\n');
    EXPECT_EQ(tl.ended_with_newline(), text.empty() || text.back() == '\n');
    EXPECT_EQ(fl.line_number(), want.size());
  }
}

TEST(FileLines, CarriageReturnRightAfterTheLimitIsALineEnd) {
  TextLines t("abcd\r\nabcde\r\n", 4);
  auto lines = all_lines(t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], (Line{"abcd", false}));
  EXPECT_EQ(lines[1], (Line{"abcd", true}));
  TempDir d;
  InputFile f(d.write("crlf", "abcd\r\nabcde\r\n").string());
  FileLines fl(f, 4);
  EXPECT_EQ(all_lines(fl), lines);
}

TEST(FileLines, EmptyInputHasNoLinesAndCountsAsEnded) {
  TempDir d;
  InputFile f(d.write("empty", "").string());
  FileLines fl(f);
  std::string_view l;
  EXPECT_FALSE(fl.next(l));
  EXPECT_TRUE(fl.ended_with_newline());
  EXPECT_TRUE(fl.empty());
}
