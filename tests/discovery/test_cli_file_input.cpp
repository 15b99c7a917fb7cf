// `gpreempt decode|map` on inputs that are not what they should be, run as a user would: a
// directory, a FIFO, an unreadable file, a read error, a file of another kind, binary garbage.
// Each fails with the path and the reason (exit 1), bounded and terminal-safe on stderr.
#include <cerrno>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <random>

#include "cli_run.h"

namespace gt = gpreempt::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gpreempt_cli_input_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

bool printable(const std::string& s) {
  for (char c : s)
    if (c != '\n' && (c < 0x20 || c >= 0x7f)) return false;
  return true;
}

std::size_t lines_of(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(CliFileInput, ADirectoryIsAnErrorWithThePath) {
  TempDir d;
  for (const char* kind : {"properties", "mqds", "hqds", "rls"}) {
    auto r = gt::run_gpreempt(std::string("decode ") + kind + " " + d.path.string());
    EXPECT_EQ(r.exit_code, 1) << kind;
    EXPECT_EQ(r.err, "gpreempt: cannot read " + d.path.string() + ": is a directory\n") << kind;
    EXPECT_EQ(r.out, "") << kind;
  }
  // Devices are refused too: /dev/zero would never end.
  auto z = gt::run_gpreempt("decode mqds /dev/zero");
  EXPECT_EQ(z.exit_code, 1);
  EXPECT_EQ(z.err, "gpreempt: cannot read /dev/zero: is a character device, not a regular file\n");
  auto m = gt::run_gpreempt("map --offline --mqds " + d.path.string());
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.err.find("cannot read " + d.path.string() + ": is a directory"), std::string::npos) << m.err;
  std::ofstream(d.path / "empty_mqds");
  auto l = gt::run_gpreempt("map --offline --mqds " + (d.path / "empty_mqds").string() + " --log " + d.path.string());
  EXPECT_EQ(l.exit_code, 1);
  EXPECT_NE(l.err.find("is a directory"), std::string::npos) << l.err;
}

TEST(CliFileInput, AFifoIsRefusedAtOnceAndStdinIsTheWayToPipe) {
  TempDir d;
  const fs::path fifo = d.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens it: a plain open would hang; the command must refuse it instead.
  auto r = gt::run_shell("timeout 20 " + gt::gpreempt_exe() + " decode mqds " + fifo.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot read " + fifo.string() + ": is a FIFO"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("standard input"), std::string::npos) << r.err;
  // The documented way: the shell connects the FIFO (here a pipe) to stdin.
  GPREEMPT_REQUIRE_SHARED();
  auto p = gt::run_shell("cat " + gt::shared_file("realdata/debugfs/03_mi308x_rocm702_mqds.txt") + " | " +
                         gt::gpreempt_exe() + " decode mqds - --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(json::parse(p.out)["complete"].get<bool>());
}

TEST(CliFileInput, AnUnreadableFileIsAnErrorWithTheReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can read a mode-000 file; the read error is tested on /proc/self/mem";
  TempDir d;
  const fs::path p = d.path / "mqds";
  std::ofstream(p) << "Process 1 PASID 1:\n";
  fs::permissions(p, fs::perms::none);
  auto r = gt::run_gpreempt("decode mqds " + p.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpreempt: cannot read " + p.string() + ": Permission denied\n");
}

TEST(CliFileInput, AReadErrorIsAnErrorNotAnEmptyInput) {
  // A regular file whose read fails (EIO at offset 0): before, this decoded as empty input, exit 0.
  auto r = gt::run_gpreempt("decode hqds /proc/self/mem");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpreempt: cannot read /proc/self/mem: Input/output error\n");
  EXPECT_EQ(r.out, "");
  auto j = gt::run_gpreempt("decode hqds /proc/self/mem --json");
  EXPECT_EQ(j.exit_code, 1);
  const auto err = json::parse(j.out)["error"];
  EXPECT_EQ(err["message"], "cannot read /proc/self/mem: Input/output error");
  EXPECT_EQ(err["code"], "EIO");
  EXPECT_EQ(err["errno"], EIO);
}

TEST(CliFileInput, AFileOfAnotherKindNamesTheDecoderItLooksLike) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string hqds = gt::shared_file("realdata/debugfs/01_mi308x_rocm702_hqds_full.txt");
  auto r = gt::run_gpreempt("decode mqds " + hqds);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpreempt: " + hqds + ": this looks like debugfs hqds output, not debugfs mqds output: try `gpreempt decode hqds " +
                       hqds + "`\n");
  const std::string log = gt::shared_file("realdata/amdlog/04_mi308x_rocm702_16streams_L3.log");
  auto l = gt::run_gpreempt("decode hqds " + log);
  EXPECT_EQ(l.exit_code, 1);
  EXPECT_NE(l.err.find("a HIP runtime log (AMD_LOG_LEVEL), not debugfs hqds output: try `gpreempt log analyze " + log + "`"),
            std::string::npos)
      << l.err;
  EXPECT_EQ(lines_of(l.err), 1u);
  const std::string mqds = gt::shared_file("realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  auto s = gt::run_gpreempt("decode rls " + mqds + " --json");
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_NE(json::parse(s.out)["error"]["message"].get<std::string>().find("try `gpreempt decode mqds " + mqds + "`"),
            std::string::npos);
  auto m = gt::run_gpreempt("map --offline --hqds " + mqds);
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.err.find("this looks like debugfs mqds output, not debugfs hqds output"), std::string::npos) << m.err;
}

TEST(CliFileInput, BinaryGarbageGivesFewEscapedDiagnostics) {
  TempDir d;
  const fs::path p = d.path / "garbage";
  {
    // 20 MB: one 10 MB line (the key of a would-be property), NUL and ESC bytes, many short lines.
    std::ofstream f(p, std::ios::binary);
    f << std::string(10u << 20, 'A') << " 1\n";
    std::mt19937 rng(3);
    std::string chunk;
    for (int i = 0; i < 200000; ++i) {
      chunk = "\x1b[2J";
      chunk += '\0';
      for (int k = 0; k < 40; ++k) {
        const char c = static_cast<char>(rng() % 256);
        chunk += c == '\n' ? 'x' : c;
      }
      chunk += '\n';
      f << chunk;
    }
    f << "k_1 1\n";
  }
  auto r = gt::run_gpreempt("decode properties " + p.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(printable(r.err)) << "raw control bytes reached the terminal";
  EXPECT_LE(lines_of(r.err), 24u) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 16000u);
  EXPECT_NE(r.err.find("line longer than 4096 bytes"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("\\x1b[2J\\0"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("more problem(s) not shown"), std::string::npos);
  // Every problem is still counted: 200000 garbage lines, the long line, no simd_count.
  EXPECT_NE(r.err.find("incomplete: 200002 problem(s)"), std::string::npos) << r.err.substr(r.err.size() - 300);
  EXPECT_LT(r.out.size(), 4096u);
}
