// A simulated node every user shares, as a real one's /dev/kfd (kfdsim start --shared): another
// uid's programs use the GPU, but no user acts on another user's process through the device, and
// what only root sees or does on a real node (debugfs queues, the GPU's records, unloading the
// driver) stays the machine owner's. Each test needs root, to run a second uid.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "sim/protocol/messages.h"
#include "sim/protocol/socket_io.h"
#include "sim_harness.h"

namespace gpreempt::testing {
namespace {

namespace protocol = gpreempt::sim::protocol;
constexpr int kNobody = 65534;

#define NEEDS_A_SECOND_UID(program)                                                   \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a process as another uid"; \
  if (!can_run_as(kNobody, program)) GTEST_SKIP() << "uid 65534 cannot reach the build's programs"

std::vector<std::string> target_argv() {
  return {bin("gpreempt_test_target").string(), "--runtime", "--queues", "1"};
}

bool started(Child& c) {
  auto l = c.line();
  return l && l->rfind("ready", 0) == 0;
}

// What the machine answers a request of `op` that a process of uid 65534 makes in the name of
// process `as`: the daemon's return value, or a transport error (< -1000) when none came.
int64_t ask_as_nobody(const Machine& m, protocol::Op op, int as) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -2000;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    int64_t ret = -1001;
    if (::setgid(kNobody) == 0 && ::setuid(kNobody) == 0) {
      const int s = protocol::connect_unix((m.dir() / "kfdsim.sock").string());
      std::vector<uint8_t> in;
      if (s < 0) {
        ret = -1002;
      } else if (protocol::send_message(s, protocol::encode(protocol::Request{op, as, as, 0, {}})) != 0 ||
                 protocol::recv_message(s, in) != 0) {
        ret = -1003;
      } else if (auto reply = protocol::decode_reply(in)) {
        ret = reply->ret;
      }
    }
    (void)!::write(pipe_fds[1], &ret, sizeof ret);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int64_t ret = -1004;
  if (::read(pipe_fds[0], &ret, sizeof ret) != sizeof ret) ret = -1005;
  ::close(pipe_fds[0]);
  ::waitpid(child, nullptr, 0);
  return ret;
}

TEST(SharedNode, AnotherUsersProgramRunsOnASharedMachineAndNotOnAPrivateOne) {
  NEEDS_A_SECOND_UID("gpreempt_test_target");
  Machine shared({"--shared"});
  Child on_shared(target_argv(), shared.env(), kNobody);
  EXPECT_TRUE(started(on_shared)) << on_shared.stderr_text();
  bool listed = false;
  for (const auto& q : shared.queues()) listed |= q.value("pid", 0) == on_shared.pid();
  EXPECT_TRUE(listed) << shared.queues().dump();

  Machine private_machine;
  Child on_private(target_argv(), private_machine.env(), kNobody);
  EXPECT_FALSE(started(on_private));
  EXPECT_NE(on_private.stderr_text().find("ermission denied"), std::string::npos)
      << on_private.stderr_text();
}

TEST(SharedNode, TheMachinesFilesAreEveryonesToReadAndOnlyItsOwnersToReplace) {
  NEEDS_A_SECOND_UID("gpreempt_test_target");
  Machine m({"--shared"});
  struct stat st {};
  ASSERT_EQ(::stat(m.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(::stat((m.dir() / "kfdsim.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  // debugfs is root's on a real node: the owner's here.
  ASSERT_EQ(::stat((m.dir() / "root/sys/kernel/debug").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const auto r = run({"/bin/sh", "-c", "cat " + (m.dir() / "root/sys/class/kfd/kfd/topology/generation_id").string() +
                                           " && touch " + (m.dir() / "planted").string()},
                     {}, kNobody);
  EXPECT_NE(r.code, 0) << "uid 65534 wrote into the machine's directory";
  EXPECT_FALSE(r.out.empty()) << "uid 65534 cannot read the machine's sysfs: " << r.err;
}

TEST(SharedNode, NoUserMakesKfdCallsInAnotherUsersName) {
  NEEDS_A_SECOND_UID("gpreempt_test_target");
  Machine m({"--shared"});
  Child roots(target_argv(), m.env());
  ASSERT_TRUE(started(roots)) << roots.stderr_text();
  // In the name of root's process: refused whatever the call.
  for (auto op : {protocol::Op::kHelloProcess, protocol::Op::kOpenKfd, protocol::Op::kIoctl,
                  protocol::Op::kMmap})
    EXPECT_EQ(ask_as_nobody(m, op, roots.pid()), -EPERM) << "op " << static_cast<int>(op);
  // Harmless requests are anyone's.
  EXPECT_EQ(ask_as_nobody(m, protocol::Op::kStatus, 0), 0);
  EXPECT_EQ(ask_as_nobody(m, protocol::Op::kRefreshFiles, 0), 0);
}

TEST(SharedNode, QueuesRecordsAndStopStayTheOwners) {
  NEEDS_A_SECOND_UID("kfdsim");
  Machine m({"--shared"});
  const std::string dir = m.dir().string();
  for (const char* cmd : {"queues", "stats", "stop"}) {
    const auto r = run({bin("kfdsim").string(), "--dir", dir, cmd}, {}, kNobody);
    EXPECT_EQ(r.code, 1) << cmd << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("only the owner of the machine"), std::string::npos) << cmd << ": " << r.err;
  }
  EXPECT_EQ(ask_as_nobody(m, protocol::Op::kShutdown, 0), -EPERM);
  const auto status = run({bin("kfdsim").string(), "--dir", dir, "status"}, {}, kNobody);
  EXPECT_EQ(status.code, 0) << "the machine stopped at another user's request: " << status.err;
  EXPECT_NO_THROW(m.queues());  // the owner still may
}

}  // namespace
}  // namespace gpreempt::testing
