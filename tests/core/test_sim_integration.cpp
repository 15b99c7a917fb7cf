// Multi-process integration through the simulated KFD: real processes, real ptrace, the
// simulator's device state as the oracle. Targets are kfd_target (raw ioctls); controllers are the
// C-ABI client abi_controller and the gpreempt CLI.
#include <gtest/gtest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "sim_harness.h"
#include "gpreempt/gpreempt.h"
#include "support/fixtures.h"

using namespace gpreempt::testing;
using nlohmann::json;

namespace {

std::vector<std::string> target_argv(int queues, bool runtime = true) {
  std::vector<std::string> a{bin("gpreempt_test_target").string()};
  if (runtime) a.push_back("--runtime");
  a.push_back("--queues");
  a.push_back(std::to_string(queues));
  return a;
}

// "ready <pid> <id>..." → ids
std::vector<uint32_t> ready_ids(Child& c) {
  auto l = c.line();
  if (!l || l->rfind("ready", 0) != 0) {
    ADD_FAILURE() << "target did not start: " << (l ? *l : "<eof>") << " " << c.stderr_text();
    return {};
  }
  std::istringstream in(*l);
  std::string word;
  int pid;
  in >> word >> pid;
  std::vector<uint32_t> ids;
  uint32_t id;
  while (in >> id) ids.push_back(id);
  return ids;
}

std::string ask(Child& c, const std::string& cmd) {
  c.send(cmd);
  auto l = c.line();
  return l ? *l : "<eof: " + c.stderr_text() + ">";
}

class CoreSim : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(bin("kfdsim")) ||
        !std::filesystem::exists(binary_dir() / "lib" / "libkfdshim.so"))
      GTEST_SKIP() << "the simulator (kfdsim, libkfdshim.so) is not built";
  }
};

}  // namespace

TEST_F(CoreSim, AttachSnapshotSuspendResumeThroughTheCAbi) {
  Machine m;
  Child target(target_argv(2), m.env());
  auto ids = ready_ids(target);
  ASSERT_EQ(ids.size(), 2u);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ASSERT_EQ(ctl.line().value_or("").rfind("ready", 0), 0u) << ctl.stderr_text();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  EXPECT_EQ(ask(ctl, "list"), "ok 2 1:0 0:0");  // newest first, none suspended
  EXPECT_EQ(ask(ctl, "suspend all"), "ok 2");
  EXPECT_TRUE(m.suspended(target.pid(), ids[0]).value_or(false));
  EXPECT_TRUE(m.suspended(target.pid(), ids[1]).value_or(false));
  EXPECT_EQ(ask(ctl, "list"), "ok 2 1:1 0:1");
  EXPECT_EQ(ask(ctl, "resume " + std::to_string(ids[0])), "ok 1 0");
  EXPECT_FALSE(m.suspended(target.pid(), ids[0]).value_or(true));
  EXPECT_TRUE(m.suspended(target.pid(), ids[1]).value_or(false));
  // Unknown id: reported per queue, never hidden.
  EXPECT_EQ(ask(ctl, "suspend 77 " + std::to_string(ids[0])), "ok 1 1 0");
  // Detach resumes what we suspended.
  EXPECT_EQ(ask(ctl, "detach"), "ok 0");
  EXPECT_FALSE(m.suspended(target.pid(), ids[0]).value_or(true));
  EXPECT_FALSE(m.suspended(target.pid(), ids[1]).value_or(true));
  // The target runs on, untraced.
  EXPECT_EQ(ask(target, "create"), "ok 2");
}

TEST_F(CoreSim, NewQueueMidRunIsSuspendedNextTime) {
  Machine m;
  Child target(target_argv(1), m.env());
  auto ids = ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  EXPECT_EQ(ask(ctl, "suspend all"), "ok 1");
  EXPECT_EQ(ask(ctl, "resume all"), "ok 1");
  EXPECT_EQ(ask(target, "create"), "ok 1");  // appears while attached: EC_QUEUE_NEW set
  EXPECT_EQ(ask(ctl, "suspend all"), "ok 2");
  EXPECT_TRUE(m.suspended(target.pid(), 1).value_or(false));
  EXPECT_EQ(ask(ctl, "resume all"), "ok 2");
}

TEST_F(CoreSim, TargetExitingWhileSuspendedIsReported) {
  Machine m;
  Child target(target_argv(2), m.env());
  ready_ids(target);
  const int tpid = target.pid();
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(tpid)), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 2");
  target.kill(SIGKILL);
  EXPECT_EQ(target.wait(), 128 + SIGKILL);
  // The control thread notices the exit; later calls say the target is gone, nothing hangs.
  std::string notice;
  for (int i = 0; i < 200 && notice.rfind("ok 1", 0) != 0; ++i) {
    notice = ask(ctl, "notice");
    if (notice.rfind("ok 1", 0) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(notice.find("exited while 2"), std::string::npos) << notice;
  auto r = ask(ctl, "suspend all");
  EXPECT_EQ(r.rfind("err", 0), 0u) << r;
  EXPECT_EQ(ask(ctl, "detach"), "ok 0");
}

TEST_F(CoreSim, KilledControllerLeavesNothingSuspended) {
  Machine m;
  Child target(target_argv(2), m.env());
  auto ids = ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 2");
  ASSERT_TRUE(m.suspended(target.pid(), ids[0]).value_or(false));
  ctl.kill(SIGKILL);
  ctl.wait();
  // The debugger's exit resumes its targets (FACTS §9).
  EXPECT_TRUE(m.wait_suspended(target.pid(), ids[0], false));
  EXPECT_TRUE(m.wait_suspended(target.pid(), ids[1], false));
  EXPECT_EQ(ask(target, "create"), "ok 2");
}

TEST_F(CoreSim, SigtermResumesThenChainsToTheProgramsHandler) {
  Machine m;
  Child target(target_argv(1), m.env());
  auto ids = ready_ids(target);
  // Library handlers on, plus a SIGTERM handler of the program's own that does not exit: the
  // resume must come from the library (the controller stays alive, so the kernel's
  // resume-on-debugger-exit cannot be what resumed it), and the program's handler still runs.
  Child ctl({bin("gpreempt_test_controller").string(), "--own-sigterm"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 1");
  ASSERT_TRUE(m.suspended(target.pid(), ids[0]).value_or(false));
  ctl.kill(SIGTERM);
  EXPECT_TRUE(m.wait_suspended(target.pid(), ids[0], false));
  // suspend_calls 1, resume_calls 0 (no API resume), watchdog 0, forced 0, signals 1, own 1.
  EXPECT_EQ(ask(ctl, "stats"), "ok 1 0 0 0 1 1");
}

TEST_F(CoreSim, SigtermWithDefaultActionResumesAndStillKills) {
  Machine m;
  Child target(target_argv(1), m.env());
  auto ids = ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string()}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 1");
  ctl.kill(SIGTERM);
  EXPECT_EQ(ctl.wait(), 128 + SIGTERM);  // dies of the signal, as it would without the library
  EXPECT_TRUE(m.wait_suspended(target.pid(), ids[0], false));
}

TEST_F(CoreSim, WatchdogBoundsASuspension) {
  Machine m;
  Child target(target_argv(1), m.env());
  auto ids = ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals", "--watchdog-ms", "200"},
            m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 1");
  EXPECT_TRUE(m.wait_suspended(target.pid(), ids[0], false));
  std::string n = ask(ctl, "notice");
  EXPECT_NE(n.find("watchdog"), std::string::npos) << n;
}

TEST_F(CoreSim, TargetStartingItsRuntimeIsAnswered) {
  Machine m;
  Child target(target_argv(0, /*runtime=*/false), m.env());
  ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  // RUNTIME_ENABLE blocks in the kernel until the debugger answers EC_PROCESS_RUNTIME: the
  // control thread does that on its own, so the target gets its answer.
  EXPECT_EQ(ask(target, "runtime"), "ok 0");
  EXPECT_EQ(ask(target, "create"), "ok 0");
  EXPECT_EQ(ask(ctl, "suspend all"), "ok 1");
  EXPECT_EQ(ask(ctl, "detach"), "ok 0");
}

TEST_F(CoreSim, TargetShuttingDownItsRuntimeIsAnsweredAndResumed) {
  Machine m;
  Child target(target_argv(1), m.env());
  auto ids = ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 1");
  // Runtime shutdown resumes the target's queues in the kernel, then blocks until answered.
  EXPECT_EQ(ask(target, "runtime_off"), "ok 0");
  EXPECT_FALSE(m.suspended(target.pid(), ids[0]).value_or(true));
  EXPECT_EQ(ask(ctl, "list"), "ok 1 0:0");  // our ledger knows it is no longer suspended
  EXPECT_EQ(ask(ctl, "detach"), "ok 0");
}

TEST_F(CoreSim, TargetThatExecsSurvivesAndIsReleased) {
  Machine m;
  Child target(target_argv(1), m.env());
  ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  ASSERT_EQ(ask(ctl, "suspend all"), "ok 1");
  target.send("exec");
  std::string notice;
  for (int i = 0; i < 200 && notice.rfind("ok 1", 0) != 0; ++i) {
    notice = ask(ctl, "notice");
    if (notice.rfind("ok 1", 0) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(notice.find("exec"), std::string::npos) << notice;
  // Still alive (an exec under ptrace without PTRACE_O_TRACEEXEC would deliver a fatal SIGTRAP)
  // and no longer traced.
  EXPECT_EQ(::kill(target.pid(), 0), 0);
  auto status = read_file("/proc/" + std::to_string(target.pid()) + "/status");
  EXPECT_NE(status.find("TracerPid:\t0\n"), std::string::npos) << status;
  EXPECT_NE(status.find("sleep"), std::string::npos);
}

TEST_F(CoreSim, SignalsToASeizedTargetActAsIfUntraced) {
  Machine m;
  Child target(target_argv(1), m.env());
  ready_ids(target);
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  ASSERT_EQ(ask(ctl, "attach " + std::to_string(target.pid())), "ok 0");
  // Stop and continue: the stop holds (group-stop kept by PTRACE_LISTEN), SIGCONT ends it.
  target.kill(SIGSTOP);
  bool stopped = false;
  for (int i = 0; i < 200 && !stopped; ++i) {
    auto st = read_file("/proc/" + std::to_string(target.pid()) + "/status");
    stopped = st.find("State:\tt") != std::string::npos || st.find("State:\tT") != std::string::npos;
    if (!stopped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stopped);
  target.kill(SIGCONT);
  EXPECT_EQ(ask(target, "create"), "ok 1");
  // A fatal signal is delivered, not swallowed by the tracer.
  target.kill(SIGUSR1);
  EXPECT_EQ(target.wait(), 128 + SIGUSR1);
}

TEST_F(CoreSim, AlreadyTracedTargetNamesTheTracer) {
  Machine m;
  Child target(target_argv(1), m.env());
  ready_ids(target);
  ASSERT_EQ(::ptrace(PTRACE_SEIZE, target.pid(), nullptr, nullptr), 0);
  auto r = run({bin("gpreempt").string(), "queues", "--pid", std::to_string(target.pid())}, m.env());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("already traced by pid " + std::to_string(::getpid())), std::string::npos)
      << r.err;
  ::ptrace(PTRACE_INTERRUPT, target.pid(), nullptr, nullptr);
  int st;
  ::waitpid(target.pid(), &st, __WALL);
  ::ptrace(PTRACE_DETACH, target.pid(), nullptr, nullptr);
}

TEST_F(CoreSim, PermissionDeniedIsExplained) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run the controller as another user";
  if (!can_run_as(65534, "gpreempt")) GTEST_SKIP() << "uid 65534 cannot reach the build's programs";
  Machine m({"--shared"});
  Child target(target_argv(1), m.env());
  ready_ids(target);
  auto r = run({bin("gpreempt").string(), "queues", "--pid", std::to_string(target.pid())}, m.env(),
               65534);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("not permitted to ptrace"), std::string::npos) << r.err;
}

TEST_F(CoreSim, OldKfdIsRefusedWithBothVersions) {
  Machine m({"--kfd-minor", "12"});
  auto r = run({bin("gpreempt").string(), "queues", "--pid", "1", "--json"}, m.env());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("1.12 found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(">= 1.13 and < 2.0"), std::string::npos) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["error"].value("errno", 0), EPROTO);
  EXPECT_EQ(j["error"]["code"], "EPROTO");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("1.12 found"), std::string::npos) << r.out;
}

TEST_F(CoreSim, CliSuspendHoldsUntilSigintAndResumes) {
  Machine m({"--hardware", "gpu"});  // the GPU model records the grace period of every runlist update
  Child target(target_argv(2), m.env());
  auto ids = ready_ids(target);
  Child cli({bin("gpreempt").string(), "suspend", "--pid", std::to_string(target.pid()), "--json",
             "--grace-us", "100"},
            m.env());
  ASSERT_TRUE(m.wait_suspended(target.pid(), ids[0], true)) << cli.stderr_text();
  EXPECT_TRUE(m.suspended(target.pid(), ids[1]).value_or(false));
  cli.kill(SIGINT);
  auto out = cli.rest();
  EXPECT_EQ(cli.wait(), 0) << cli.stderr_text();
  auto j = json::parse(out);
  EXPECT_EQ(j["suspend"]["count"], 2);
  EXPECT_EQ(j["resume"]["count"], 2);
  EXPECT_EQ(j["ended_by"], "signal INT");
  // --grace-us reaches the hardware in the kernel's unit, 1,000 GPU clocks (FACTS §8): 100 us at
  // the GPU's clock, rounded up — not the driver default (0xffffffff) and not microseconds.
  const uint64_t mhz = j["clock_mhz"].get<uint32_t>();
  ASSERT_NE(mhz, 0u);
  const uint64_t units = (100 * mhz + 999) / 1000;
  EXPECT_EQ(j["grace_units"].get<uint64_t>(), units);
  EXPECT_FALSE(m.suspended(target.pid(), ids[0]).value_or(true));
  auto stats = run({bin("kfdsim").string(), "--dir", m.dir().string(), "stats", "--json"}, {});
  ASSERT_EQ(stats.code, 0) << stats.err;
  const auto records = json::parse(stats.out);
  std::vector<uint64_t> suspend_graces;
  for (const auto& g : records["gpus"])
    for (const auto& rec : g["runlist"])
      if (rec["kind"] == "suspend") suspend_graces.push_back(rec["grace_kclk"].get<uint64_t>());
  ASSERT_FALSE(suspend_graces.empty()) << stats.out;
  for (uint64_t g : suspend_graces) EXPECT_EQ(g, units);
}

TEST_F(CoreSim, CliQueuesSnapshotAndSysfsAgree) {
  Machine m;
  Child target(target_argv(3), m.env());
  ready_ids(target);
  const std::string pid = std::to_string(target.pid());
  auto snap = run({bin("gpreempt").string(), "queues", "--pid", pid, "--json"}, m.env());
  ASSERT_EQ(snap.code, 0) << snap.err;
  auto sys = run({bin("gpreempt").string(), "queues", "--pid", pid, "--sysfs", "--json"}, m.env());
  ASSERT_EQ(sys.code, 0) << sys.err;
  auto a = json::parse(snap.out)["queues"], b = json::parse(sys.out)["queues"];
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  std::set<uint32_t> ia, ib;
  for (auto& q : a) ia.insert(q["queue_id"].get<uint32_t>());
  for (auto& q : b) ib.insert(q["queue_id"].get<uint32_t>());
  EXPECT_EQ(ia, ib);
  EXPECT_EQ(a[0]["type"], "compute");
  EXPECT_EQ(a[0]["aql"], true);
  // One name per thing: the snapshot and sysfs agree on a queue's type and ring size.
  EXPECT_EQ(a[0]["type"], b[0]["type"]);
  EXPECT_EQ(a[0]["ring_size_bytes"], b[0]["ring_size_bytes"]);
  // The target lists its own queues without root or a debug session.
  target.send("print");
  std::string all;
  for (int i = 0; i < 5; ++i) all += target.line().value_or("") + "\n";
  EXPECT_NE(all.find("has 3 KFD queue(s)"), std::string::npos) << all;
  EXPECT_NE(all.find("ok 3"), std::string::npos) << all;
}

TEST_F(CoreSim, CliBenchReportsDistributions) {
  Machine m({"--hardware", "gpu"});  // the GPU model records every runlist update it executes
  Child target(target_argv(2), m.env());
  ready_ids(target);
  auto r = run({bin("gpreempt").string(), "bench", "preempt", "--pid", std::to_string(target.pid()),
                "--cycles", "20", "--json"},
               m.env());
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["suspend"]["wall_us"]["count"], 20);
  EXPECT_EQ(j["resume"]["ioctl_us"]["count"], 20);
  EXPECT_LE(j["suspend"]["wall_us"]["p50"].get<double>(), j["suspend"]["wall_us"]["max"].get<double>());
  // The simulated side: one stop latency per suspend, one remap per resume (model time).
  ASSERT_FALSE(j["simulated"].is_null()) << r.out;
  EXPECT_EQ(j["simulated"]["suspend_stop_latency_us"]["count"], 20);
  EXPECT_EQ(j["simulated"]["resume_runlist_round_trip_us"]["count"], 20);
}

TEST_F(CoreSim, CliUsageErrorsExitTwo) {
  Machine m;
  EXPECT_EQ(run({bin("gpreempt").string(), "suspend"}, m.env()).code, 2);
  EXPECT_EQ(run({bin("gpreempt").string(), "suspend", "--pid", "1", "--grace", "1", "--grace-us", "1"},
                m.env()).code, 2);
  EXPECT_EQ(run({bin("gpreempt").string(), "suspend", "--pid", "1", "--queues", "x"}, m.env()).code, 2);
}

// ---- commands pointed at a process without queues ----------------------------------------------

TEST_F(CoreSim, CliCommandsRefuseAProcessWithoutQueues) {
  Machine m;
  Child target(target_argv(0), m.env());  // /dev/kfd open, runtime enabled, no queue yet
  ready_ids(target);
  const std::string pid = std::to_string(target.pid());
  const std::vector<std::vector<std::string>> commands = {
      {"suspend", "--pid", pid, "--for", "0"},
      {"resume", "--pid", pid},
      {"queues", "--pid", pid},
      {"queues", "--pid", pid, "--sysfs"},
      {"bench", "preempt", "--pid", pid, "--cycles", "1"},
      {"map", "--pid", pid},
  };
  for (auto args : commands) {
    args.insert(args.begin(), bin("gpreempt").string());
    args.push_back("--json");
    auto r = run(args, m.env());
    EXPECT_EQ(r.code, 1) << args[1] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("pid " + pid + " (gpreempt_test_t"), std::string::npos) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("has no GPU queues yet"), std::string::npos) << args[1] << ": " << r.err;
    auto j = json::parse(r.out);
    EXPECT_EQ(j["reason"], "no_queues") << args[1];
    EXPECT_EQ(j["pid"], target.pid()) << args[1];
  }
}

TEST_F(CoreSim, PrintMyQueuesBeforeTheFirstQueueSaysSo) {
  Machine m;
  Child target(target_argv(0), m.env());
  ready_ids(target);
  target.send("print");
  EXPECT_EQ(target.line().value_or(""), "gpreempt: process " + std::to_string(target.pid()) +
                                            " has no KFD queues yet (queues appear when the GPU "
                                            "runtime first uses the GPU)");
  EXPECT_EQ(target.line().value_or(""), "ok 0");
}

TEST_F(CoreSim, AttachRequiringQueuesRefusesTheWrongProcess) {
  Machine m;
  Child empty(target_argv(0), m.env());
  ready_ids(empty);
  Child idle({"/bin/sleep", "30"}, m.env());  // never opens /dev/kfd
  // The refusal names the process by its comm: wait until the child has exec'd sleep (before that
  // it still carries this test's name).
  const auto comm_of_idle = [&] {
    std::ifstream f("/proc/" + std::to_string(idle.pid()) + "/comm");
    std::string comm;
    std::getline(f, comm);
    return comm;
  };
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       comm_of_idle() != "sleep" && std::chrono::steady_clock::now() < until;)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(comm_of_idle(), "sleep");
  Child ctl({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());
  ctl.line();
  EXPECT_EQ(ask(ctl, "attach-require " + std::to_string(idle.pid())).rfind("err " + std::to_string(ESRCH) + " pid " +
                                                                             std::to_string(idle.pid()) + " (sleep) has not opened /dev/kfd", 0),
            0u);
  EXPECT_EQ(ask(ctl, "attach-require " + std::to_string(empty.pid())).rfind("err " + std::to_string(ENODATA), 0), 0u);
  Child busy(target_argv(1), m.env());
  ready_ids(busy);
  EXPECT_EQ(ask(ctl, "attach-require " + std::to_string(busy.pid())), "ok 0");
}

// ---- watchdog_ms = 0 means "no watchdog" in the C ABI, the CLI and Python ----------------------

TEST_F(CoreSim, WatchdogZeroIsOffAndUnsetIsTheDefaultInTheCAbi) {
  Machine m;
  Child zero({bin("gpreempt_test_controller").string(), "--no-signals"}, m.env());  // watchdog_ms 0
  zero.line();
  EXPECT_EQ(ask(zero, "watchdog"), "ok 0");
  Child unset({bin("gpreempt_test_controller").string(), "--null-opts"}, m.env());
  unset.line();
  EXPECT_EQ(ask(unset, "watchdog"), "ok " + std::to_string(GPREEMPT_WATCHDOG_DEFAULT_MS));
  Child set({bin("gpreempt_test_controller").string(), "--no-signals", "--watchdog-ms", "200"}, m.env());
  set.line();
  EXPECT_EQ(ask(set, "watchdog"), "ok 200");
}

TEST_F(CoreSim, WatchdogZeroIsOffAndUnsetIsTheDefaultInTheCli) {
  Machine m;
  Child target(target_argv(1), m.env());
  ready_ids(target);
  const std::string pid = std::to_string(target.pid());
  auto off = run({bin("gpreempt").string(), "suspend", "--pid", pid, "--for", "0", "--watchdog-ms", "0", "--json"},
                 m.env());
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_EQ(json::parse(off.out)["watchdog_ms"], 0);
  auto dflt = run({bin("gpreempt").string(), "suspend", "--pid", pid, "--for", "0", "--json"}, m.env());
  ASSERT_EQ(dflt.code, 0) << dflt.err;
  EXPECT_EQ(json::parse(dflt.out)["watchdog_ms"], GPREEMPT_WATCHDOG_DEFAULT_MS);
}

// ---- gpreempt info: whether suspend/resume can work here, and why not ---------------------------

TEST_F(CoreSim, InfoShowsGfxTargetAndProductAndAvailability) {
  Machine m;
  auto r = run({bin("gpreempt").string(), "info", "--json"}, m.env());
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = json::parse(r.out);
  EXPECT_TRUE(j["suspend_resume"]["available"].get<bool>());
  EXPECT_EQ(j["kfd"]["hws"], true);
  ASSERT_FALSE(j["gpus"].empty());
  EXPECT_EQ(j["gpus"][0]["gfx_target"], "gfx942");
  EXPECT_EQ(j["gpus"][0]["product"], "AMD Instinct MI308X");
  auto text = run({bin("gpreempt").string(), "info"}, m.env());
  EXPECT_NE(text.out.find("gfx942"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("AMD Instinct MI308X"), std::string::npos) << text.out;
}

TEST_F(CoreSim, InfoSaysSuspendIsUnavailableOnAnOldKfd) {
  Machine m({"--kfd-minor", "12"});
  auto r = run({bin("gpreempt").string(), "info", "--json"}, m.env());
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = json::parse(r.out);
  EXPECT_FALSE(j["suspend_resume"]["available"].get<bool>());
  const std::string reason = j["suspend_resume"]["reason"], fix = j["suspend_resume"]["fix"];
  EXPECT_NE(reason.find("1.12, older than 1.13"), std::string::npos) << reason;
  EXPECT_NE(fix.find("Linux >= 6.5"), std::string::npos) << fix;
  EXPECT_NE(fix.find("ROCm >= 5.7"), std::string::npos) << fix;
}

TEST_F(CoreSim, InfoSaysSuspendIsUnavailableWithoutTheHardwareScheduler) {
  Machine m({"--sched-policy", "2"});
  auto r = run({bin("gpreempt").string(), "info", "--json"}, m.env());
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = json::parse(r.out);
  EXPECT_FALSE(j["suspend_resume"]["available"].get<bool>());
  EXPECT_EQ(j["kfd"]["hws"], false);
  const std::string reason = j["suspend_resume"]["reason"];
  EXPECT_NE(reason.find("sched_policy=2"), std::string::npos) << reason;
  auto text = run({bin("gpreempt").string(), "info"}, m.env());
  EXPECT_NE(text.out.find("NOT available"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Fix: load amdgpu with sched_policy=0"), std::string::npos) << text.out;
}
