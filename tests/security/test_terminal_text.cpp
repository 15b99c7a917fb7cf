// A command line is another user's text: wherever gpreemptd or the CLI prints one (the journal,
// `gpreempt ctl status`, `gpreempt top`), its escape sequences must show as text, never reach the
// terminal as commands (a title change, a cleared screen, a forged line). lib/common/escape.h's
// printable() is the one helper; the end-to-end test plants a hostile argv on a simulated node.
#include <gtest/gtest.h>
#include <signal.h>

#include "common/escape.h"
#include "daemon_rig.h"

namespace gpreempt::testing {
namespace {

TEST(TerminalText, ControlsAndTheirUtf8FormsAreShownAsText) {
  EXPECT_EQ(printable("a\x1b]0;t\x07z"), "a\\x1b]0;t\\x07z");
  EXPECT_EQ(printable("\r\n\t\x7f"), "\\x0d\\x0a\\x09\\x7f");
  // C1 CSI in its UTF-8 form, and as a lone byte (not UTF-8).
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\xc2\\x9b31m");
  EXPECT_EQ(printable("\x9b" "31m"), "\\x9b31m");
  // A right-to-left override reorders what a reader sees.
  EXPECT_EQ(printable("x\xe2\x80\xaey"), "x\\xe2\\x80\\xaey");
  // Text in other scripts stays readable; a backslash cannot pose as one of our escapes.
  EXPECT_EQ(printable("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5");
  EXPECT_EQ(printable("\\x1b"), "\\\\x1b");
  // Overlong and truncated sequences are not UTF-8.
  EXPECT_EQ(printable("\xc0\x9b"), "\\xc0\\x9b");
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");
  EXPECT_EQ(printable_command_line({"python3", "-c", "\x1b[2J"}), "python3 -c \\x1b[2J");
}

bool has_raw_control(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f || c == 0x9b) return true;
  return false;
}

TEST(TerminalText, AHostileCommandLineReachesNeitherTheJournalNorCtlStatusRaw) {
  DaemonRig rig;
  auto daemon = rig.start_daemon();
  auto hostile = rig.peer({"GPREEMPT_CLASS=offline"}, 0, {"\x1b]0;owned\x07", "\x1b[2J", "\xc2\x9b" "1A"});
  ASSERT_EQ(command(*hostile, "queue").get<std::string>().rfind("ok ", 0), 0u);
  ASSERT_TRUE(eventually([&] {
    auto p = rig.process(hostile->pid());
    return !p.is_null() && p["queues"].get<int>() > 0;
  })) << rig.status().dump();

  auto r = run({bin("gpreempt").string(), "ctl", "status", "--socket", rig.socket()}, {});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has_raw_control(r.out)) << r.out;
  EXPECT_NE(r.out.find("\\x1b]0;owned\\x07"), std::string::npos) << r.out;

  daemon->kill(SIGTERM);
  daemon->wait();
  const std::string log = daemon->stderr_text();
  EXPECT_NE(log.find("\\x1b]0;owned\\x07"), std::string::npos) << log;
  for (std::size_t at = 0; (at = log.find("gpreemptd_test_peer", at)) != std::string::npos; ++at) {
    const std::string line = log.substr(at, log.find('\n', at) - at);
    EXPECT_FALSE(has_raw_control(line)) << line;
  }
}

}  // namespace
}  // namespace gpreempt::testing
