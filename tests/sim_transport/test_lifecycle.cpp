// The daemon's life: started on demand by the first client, one per machine directory, gone after
// its last client; and `kfdsim`, the stable way to start, inspect and run programs on a machine.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "machine_fixture.h"
#include "fixtures.h"

using gpreempt::testing::build_path;
using gpreempt::testing::Child;
using gpreempt::testing::Machine;
using gpreempt::testing::daemons_in;

namespace {

std::unique_ptr<Child> kfdsim(Machine& m, std::vector<std::string> args) {
  args.insert(args.begin(), build_path("bin/kfdsim").string());
  auto env = m.env();
  env.erase("LD_PRELOAD");  // kfdsim itself runs without the shim
  return std::make_unique<Child>(args, env);
}

// The environment of a `kfdsim run` whose private machine directories go into m.dir()/tmp (its
// TMPDIR only: parallel tests make their own run directories), kfdsim itself without the shim.
std::map<std::string, std::string> run_env(Machine& m) {
  std::filesystem::create_directory(m.dir() / "tmp");
  auto env = m.env();
  env.erase("LD_PRELOAD");
  env["TMPDIR"] = (m.dir() / "tmp").string();
  return env;
}

// A persistent machine with the GPU model whose device has seen one runlist update: `client`
// created a queue (and keeps it while it lives). daemon is 0 (with a test failure) if it failed.
struct GpuMachine {
  int daemon = 0;
  std::unique_ptr<Child> client;
};
GpuMachine start_gpu_machine_with_one_update(Machine& m) {
  GpuMachine g;
  auto start = kfdsim(m, {"start", "--hardware", "gpu"});
  EXPECT_EQ(WEXITSTATUS(start->finish()), 0) << start->rest();
  auto s = m.status();
  if (!s) {
    ADD_FAILURE() << "no daemon answers after kfdsim start";
    return g;
  }
  g.client = m.probe();
  g.client->call("open");
  EXPECT_EQ(g.client->call("create"), "0 0 0");
  g.daemon = (*s)["daemon_pid"].get<int>();
  return g;
}

}  // namespace

TEST(Lifecycle, DaemonStartsOnDemandAndExitsAfterLastClient) {
  Machine m;
  EXPECT_FALSE(m.status()) << "no daemon before the first client";
  auto a = m.probe();
  auto b = m.probe();
  a->call("open");
  b->call("open");
  auto s = m.status();
  ASSERT_TRUE(s);
  int daemon = (*s)["daemon_pid"].get<int>();
  EXPECT_FALSE((*s)["persistent"].get<bool>());
  EXPECT_EQ((*s)["clients"].size(), 2u);
  EXPECT_EQ(a->finish(), 0);
  EXPECT_EQ(b->call("version"), "0 0 1 22") << "one client left: the daemon stays";
  EXPECT_EQ(b->finish(), 0);
  EXPECT_TRUE(m.wait_daemon_gone(daemon));
  EXPECT_FALSE(std::filesystem::exists(m.dir() / "kfdsim.sock"));
}

TEST(Lifecycle, ConcurrentFirstClientsShareOneDaemon) {
  Machine m;
  std::vector<std::unique_ptr<Child>> probes;
  for (int i = 0; i < 4; ++i) probes.push_back(m.probe());
  for (auto& p : probes) p->send("open");
  for (auto& p : probes) {
    auto l = p->line();
    ASSERT_TRUE(l);
    EXPECT_NE(l->substr(0, 2), "-1") << *l;
  }
  EXPECT_EQ((*m.status())["clients"].size(), 4u);
}

TEST(Lifecycle, MachinesAreIsolated) {
  Machine m1, m2;
  auto p1 = m1.probe();
  auto p2 = m2.probe();
  p1->call("open");
  p2->call("open");
  ASSERT_EQ(p1->call("create"), "0 0 0");
  EXPECT_EQ(m1.queues()->size(), 1u);
  EXPECT_EQ(m2.queues()->size(), 0u);
  EXPECT_NE((*m1.status())["daemon_pid"], (*m2.status())["daemon_pid"]);
  EXPECT_EQ(p2->call("create"), "0 0 0") << "queue ids are per machine and per process";
}

TEST(Kfdsim, StartStatusStop) {
  Machine m;
  auto start = kfdsim(m, {"start", "--profile", "mi300x", "--gpus", "2", "--kfd-minor", "16",
                          "--kernel-hz", "1000"});
  EXPECT_EQ(WEXITSTATUS(start->finish()), 0) << start->rest();
  auto s = m.status();
  ASSERT_TRUE(s);
  EXPECT_TRUE((*s)["persistent"].get<bool>());
  EXPECT_EQ((*s)["profile"], "mi300x");
  EXPECT_EQ((*s)["gpus"].size(), 2u);
  EXPECT_EQ((*s)["kfd_version"], "1.16");
  EXPECT_EQ((*s)["kernel_hz"], 1000);
  {
    auto p = m.probe();  // a client comes and goes; the persistent daemon stays
    p->call("open");
    EXPECT_EQ(p->call("version"), "0 0 1 16");
    EXPECT_EQ(p->finish(), 0);
  }
  auto status = kfdsim(m, {"status", "--json"});
  std::string out;
  while (auto l = status->line()) out += *l;
  EXPECT_EQ(WEXITSTATUS(status->finish()), 0);
  EXPECT_EQ(nlohmann::json::parse(out)["daemon_pid"], (*s)["daemon_pid"]);
  auto stop = kfdsim(m, {"stop"});
  EXPECT_EQ(WEXITSTATUS(stop->finish()), 0);
  EXPECT_TRUE(m.wait_daemon_gone((*s)["daemon_pid"].get<int>()));
}

TEST(Kfdsim, RunGivesTheCommandAPrivateMachineAndItsExitCode) {
  Machine m;  // only for the environment; `run` makes its own machine
  auto r = kfdsim(m, {"run", "--kfd-minor", "14", "--", build_path("bin/kfd_probe").string()});
  r->send("open");
  r->send("version");
  r->send("cat /sys/class/kfd/kfd/topology/generation_id");
  auto open = r->line();
  auto version = r->line();
  ASSERT_TRUE(open && version);
  EXPECT_EQ(*version, "0 0 1 14");
  EXPECT_EQ(r->line()->substr(0, 4), "0 0 ");
  EXPECT_EQ(WEXITSTATUS(r->finish()), 0);
  EXPECT_FALSE(m.status()) << "run never touches the environment's machine";

  auto code = kfdsim(m, {"run", "--", "/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(WEXITSTATUS(code->finish()), 7);
}

TEST(Kfdsim, QueuesAndFilesShowTheMachine) {
  Machine m;
  auto p = m.probe();
  p->call("open");
  ASSERT_EQ(p->call("create"), "0 0 0");
  auto q = kfdsim(m, {"queues"});
  auto header = q->line();
  auto row = q->line();
  ASSERT_TRUE(header && row);
  EXPECT_NE(header->find("RING_BASE"), std::string::npos);
  EXPECT_NE(row->find("compute_aql"), std::string::npos) << *row;
  EXPECT_EQ(WEXITSTATUS(q->finish()), 0);
  auto f = kfdsim(m, {"files", "/sys/class/kfd/kfd/topology/generation_id"});
  auto gen = f->line();
  ASSERT_TRUE(gen);
  EXPECT_EQ(WEXITSTATUS(f->finish()), 0);
  auto bad = kfdsim(m, {"files", "/etc/passwd"});
  EXPECT_EQ(WEXITSTATUS(bad->finish()), 2);
  // The listing names files by their /sys/class paths though /sys/class/kfd/kfd is a symlink, and
  // ends though sysfs has cycles (/sys/class/drm/card0/device/drm/card0 is card0 again).
  auto all = kfdsim(m, {"files"});
  bool properties = false, drm = false, dev = false;
  while (auto l = all->line()) {
    properties |= l->find("/sys/class/kfd/kfd/topology/nodes/1/properties") != std::string::npos;
    drm |= l->find("/sys/class/drm/card0/device/") != std::string::npos;
    dev |= l->find(" /dev/") != std::string::npos;
  }
  EXPECT_EQ(WEXITSTATUS(all->finish()), 0);
  EXPECT_TRUE(properties) << "a node's properties under /sys/class/kfd";
  EXPECT_TRUE(drm) << "the DRM device's files";
  EXPECT_FALSE(dev) << "no device node placeholder (/dev/kfd, /dev/dri/renderD*)";
}

TEST(Kfdsim, UsageErrorsExitTwo) {
  Machine m;
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {})->finish()), 2);
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"start", "--profile", "mi999"})->finish()), 2);
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"run", "--gpus", "x", "--", "true"})->finish()), 2);
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"run", "--kernel-hz", "300", "--", "true"})->finish()), 2);
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"--help"})->finish()), 0);
}

TEST(Kfdsim, HardwareModelIsChosenByName) {
  Machine m;
  auto start = kfdsim(m, {"start", "--hardware", "gpu"});
  EXPECT_EQ(WEXITSTATUS(start->finish()), 0) << start->rest();
  auto s = m.status();
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)["hardware"], "gpu");
  {
    auto p = m.probe();
    p->call("open");
    EXPECT_EQ(p->call("create"), "0 0 0") << "queue creation goes through the model's runlist";
  }
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"stop"})->finish()), 0);
  m.wait_daemon_gone((*s)["daemon_pid"].get<int>());

  auto bad = kfdsim(m, {"start", "--hardware", "warp-drive"});
  EXPECT_EQ(WEXITSTATUS(bad->finish()), 1) << "the daemon refuses an unknown model";
  EXPECT_FALSE(m.status());
}

TEST(Kfdsim, StatsShowTheGpuModelsRecordsLiveAndInAFileOnceStopped) {
  Machine m;
  auto g = start_gpu_machine_with_one_update(m);
  ASSERT_NE(g.daemon, 0);
  {
    // Answered from the daemon's memory: the record of the update the ioctl caused is there as
    // soon as the ioctl has returned, with nothing written to disk yet.
    EXPECT_FALSE(std::filesystem::exists(m.dir() / "gpu-stats.json"));
    auto text = kfdsim(m, {"stats"});
    const int rc = text->finish();
    const std::string out = text->rest();
    EXPECT_EQ(WEXITSTATUS(rc), 0) << out;
    EXPECT_NE(out.find("ROUNDTRIP_US"), std::string::npos) << out;
    EXPECT_NE(out.find(" create "), std::string::npos) << out;
    auto json = kfdsim(m, {"stats", "--json"});
    EXPECT_EQ(WEXITSTATUS(json->finish()), 0);
    const auto j = nlohmann::json::parse(json->rest());
    ASSERT_EQ(j["gpus"].size(), 1u);
    EXPECT_EQ(j["gpus"][0]["runlist"].size(), 1u);
    EXPECT_EQ(j["gpus"][0]["last_seq"], j["gpus"][0]["runlist"][0]["seq"]);
    auto later = kfdsim(m, {"stats", "--json", "--since", std::to_string(j["gpus"][0]["last_seq"].get<uint64_t>())});
    EXPECT_EQ(WEXITSTATUS(later->finish()), 0);
    EXPECT_TRUE(nlohmann::json::parse(later->rest())["gpus"][0]["runlist"].empty());
  }
  g.client.reset();
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"stop"})->finish()), 0);
  ASSERT_TRUE(m.wait_daemon_gone(g.daemon));
  // The daemon leaves everything it recorded behind when it stops.
  std::ifstream in(m.dir() / "gpu-stats.json");
  ASSERT_TRUE(in) << "no gpu-stats.json after stop";
  const auto file = nlohmann::json::parse(in);
  EXPECT_EQ(file["gpus"][0]["runlist"][0]["kind"], "create");

  // A machine whose hardware records nothing says so (and is not mistaken for an absent one).
  auto instant = kfdsim(m, {"start", "--hardware", "instant"});
  EXPECT_EQ(WEXITSTATUS(instant->finish()), 0);
  auto env = m.env();
  env.erase("LD_PRELOAD");
  Child none({"/bin/sh", "-c", "exec \"$0\" stats 2>&1", build_path("bin/kfdsim").string()}, env);
  EXPECT_EQ(WEXITSTATUS(none.finish()), 1);
  EXPECT_NE(none.rest().find("records nothing"), std::string::npos);
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"stop"})->finish()), 0);
  auto gone = kfdsim(m, {"stats"});
  EXPECT_EQ(WEXITSTATUS(gone->finish()), 1);
}

TEST(Kfdsim, TerminatedDaemonStillLeavesItsRecordsAndNoSocket) {
  Machine m;
  auto g = start_gpu_machine_with_one_update(m);
  ASSERT_NE(g.daemon, 0);
  g.client.reset();
  const int daemon = g.daemon;
  ASSERT_EQ(::kill(daemon, SIGTERM), 0);
  ASSERT_TRUE(m.wait_daemon_gone(daemon));
  std::ifstream in(m.dir() / "gpu-stats.json");
  ASSERT_TRUE(in) << "SIGTERM lost the records";
  EXPECT_EQ(nlohmann::json::parse(in)["gpus"][0]["runlist"][0]["kind"], "create");
  EXPECT_FALSE(std::filesystem::exists(m.dir() / "kfdsim.sock"));
}

// The daemon stands in for the GPU and runs ahead of the host's processes (default niceness -10
// where allowed); --nice sets it.
namespace {

// A thread's time slice in ns from /proc/<pid>/task/<tid>/sched ("se.slice : N"), on a kernel
// whose fair scheduler takes a per-task slice (Linux >= 6.12); nullopt elsewhere.
std::optional<long> slice_ns(int pid, int tid) {
  utsname u{};
  int major = 0, minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2 ||
      std::make_pair(major, minor) < std::make_pair(6, 12))
    return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/sched");
  for (std::string l; std::getline(in, l);)
    if (l.rfind("se.slice", 0) == 0) return std::stol(l.substr(l.find(':') + 1));
  return std::nullopt;
}

}  // namespace

TEST(Kfdsimd, RunsAtTheNicenessAsked) {
  // Above this test's own niceness: an ordinary user cannot lower it, and CI may run the suite
  // niced (`nice -n 10`).
  const int own = ::getpriority(PRIO_PROCESS, 0);
  if (own >= 19) GTEST_SKIP() << "this test runs at niceness 19: there is none above to ask for";
  const std::string want = std::to_string(std::max(7, own + 1));
  Machine m;
  auto env = m.env();
  env.erase("LD_PRELOAD");
  Child d({build_path("bin/kfdsimd").string(), "--dir", m.dir().string(), "--persistent", "--daemonize",
           "--nice", want},
          env);
  ASSERT_EQ(WEXITSTATUS(d.finish()), 0);
  auto s = m.status();
  ASSERT_TRUE(s);
  const int pid = (*s)["daemon_pid"].get<int>();
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // Field 19 is the niceness; the command name (field 2) ends at the last ')'.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 19; ++i) rest >> field;
  EXPECT_EQ(field, want) << line;
  // With autogroups a niceness weighs only inside the session; the daemonized kfdsimd leads its
  // own, whose autogroup must carry the same niceness ("/autogroup-N nice K").
  std::ifstream enabled("/proc/sys/kernel/sched_autogroup_enabled");
  std::string on;
  if (enabled >> on && on == "1") {
    std::ifstream ag("/proc/" + std::to_string(pid) + "/autogroup");
    std::string group;
    std::getline(ag, group);
    EXPECT_NE(group.find(" nice " + want), std::string::npos) << group;
  }
  // And a short time slice, so that its wake-ups preempt (docs/simulator.md, "Live timing").
  if (const auto slice = slice_ns(pid, pid)) {
    EXPECT_EQ(*slice, 100000) << "kfdsimd's time slice";
  }
  EXPECT_EQ(WEXITSTATUS(kfdsim(m, {"stop"})->finish()), 0);
  EXPECT_TRUE(m.wait_daemon_gone(pid));
}

TEST(Kfdsim, RunLeavesNoMachineBehindWhenTheDaemonCannotStart) {
  Machine m;
  const auto env = run_env(m);
  const auto tmp = m.dir() / "tmp";
  Child r({build_path("bin/kfdsim").string(), "run", "--hardware", "warp-drive", "--", "/bin/true"}, env);
  EXPECT_EQ(WEXITSTATUS(r.finish()), 1);
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the private machine directory was left behind";
  Child ok({build_path("bin/kfdsim").string(), "run", "--", "/bin/true"}, env);
  EXPECT_EQ(WEXITSTATUS(ok.finish()), 0);
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "a finished run removes its machine";
}

TEST(Kfdsim, RunPassesSigtermToTheCommandAndStillRemovesItsMachine) {
  // `timeout 60 kfdsim run -- app` sends SIGTERM to kfdsim: the command gets it, and the private
  // machine (daemon and directory) goes away as after a normal exit.
  Machine m;
  const auto env = run_env(m);
  const auto tmp = m.dir() / "tmp";
  for (int sig : {SIGTERM, SIGHUP}) {
    Child r({build_path("bin/kfdsim").string(), "run", "--", "/bin/sh", "-c", "echo ready; exec sleep 60"}, env);
    ASSERT_EQ(r.line(), "ready");
    ASSERT_EQ(daemons_in(tmp).size(), 1u) << "the run's daemon is up";
    r.kill(sig);
    const int status = r.finish();
    ASSERT_TRUE(WIFEXITED(status)) << "kfdsim itself was killed by signal " << sig;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << "the command was ended by the forwarded signal";
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the private machine directory was left behind";
    EXPECT_TRUE(daemons_in(tmp).empty()) << "the run's daemon outlived it";
  }
}

TEST(Kfdsim, RunKilledOutrightLeavesNoMachineBehind) {
  // SIGKILL runs none of kfdsim run's clean-up (a killed `gpreempt demo` is a kfdsim run): the
  // command gets SIGTERM from the kernel, and the daemon run started follows run's pid, stops,
  // and removes the private machine directory.
  Machine m;
  const auto env = run_env(m);
  const auto tmp = m.dir() / "tmp";
  Child r({build_path("bin/kfdsim").string(), "run", "--", "/bin/sh", "-c", "echo $$; exec sleep 60"}, env);
  const auto first = r.line();
  ASSERT_TRUE(first) << "the command did not start";
  const int command = std::stoi(*first);
  ASSERT_EQ(daemons_in(tmp).size(), 1u) << "the run's daemon is up";
  r.kill(SIGKILL);
  r.wait_status();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto left = [&] {
    return !daemons_in(tmp).empty() || !std::filesystem::is_empty(tmp) ||
           !gpreempt::testing::process_ended(command);
  };
  while (left() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(daemons_in(tmp).empty()) << "the daemon of a killed run kept running";
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the private machine directory was left behind";
  EXPECT_TRUE(gpreempt::testing::process_ended(command)) << "the command of a killed run kept running";
  if (!gpreempt::testing::process_ended(command)) ::kill(command, SIGKILL);
}

namespace {

// What a run's command leaves behind in the background, as a script that starts gpreemptd with `&`
// does: a process that uses the machine in a loop (a sysfs lookup, through the shim, counted in
// `count`) and ignores SIGHUP and SIGINT (a background job of a non-interactive shell ignores
// SIGINT; gpreemptd takes SIGHUP as "reload"). The command prints its pid first.
std::string leaves_a_user_behind(const std::filesystem::path& count) {
  return "COUNT='" + count.string() + "'; (trap '' HUP INT; while :; do "
         "cat /sys/class/kfd/kfd/topology/generation_id >/dev/null 2>&1; echo . >> \"$COUNT\"; "
         "sleep 0.05; done) & echo $!; ";
}

std::size_t lines_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

// Waits (bounded) until `pid` has ended; kills it if it has not, and says whether it had.
bool ended_or_killed(int pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!gpreempt::testing::process_ended(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (gpreempt::testing::process_ended(pid)) return true;
  ::kill(pid, SIGKILL);
  return false;
}

}  // namespace

TEST(Kfdsim, RunLeavesNothingBehindHoweverItEnds) {
  // Normal exit, a signal to run (SIGTERM: `timeout`; SIGHUP: the terminal closed; SIGINT sent to
  // run alone), and the command killed: the process the command left in the background ends, then
  // the machine (daemon and directory) goes.
  struct Ending {
    std::string name;
    std::string command_tail;  // after the background user has been started
    int signal_to_run = 0;     // 0: none
    bool kill_command = false;
    int exit_code;
  };
  const std::vector<Ending> endings = {
      {"normal exit", "echo $$; while [ ! -s \"$COUNT\" ]; do sleep 0.01; done; exit 3", 0, false, 3},
      {"SIGTERM", "echo $$; exec sleep 600", SIGTERM, false, 128 + SIGTERM},
      {"SIGHUP", "echo $$; exec sleep 600", SIGHUP, false, 128 + SIGHUP},
      {"SIGINT", "echo $$; exec sleep 600", SIGINT, false, 128 + SIGINT},
      {"command killed", "echo $$; exec sleep 600", 0, true, 128 + SIGKILL},
  };
  Machine m;
  const auto env = run_env(m);
  const auto tmp = m.dir() / "tmp";
  for (const auto& e : endings) {
    SCOPED_TRACE(e.name);
    const auto count = m.dir() / ("count-" + std::to_string(&e - endings.data()));
    Child r({build_path("bin/kfdsim").string(), "run", "--", "/bin/sh", "-c",
             leaves_a_user_behind(count) + e.command_tail},
            env);
    const auto user = r.line();
    const auto command = r.line();
    ASSERT_TRUE(user && command) << "the command did not start";
    const int user_pid = std::stoi(*user);
    const auto started = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (lines_in(count) == 0 && std::chrono::steady_clock::now() < started)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_GT(lines_in(count), 0u) << "the background user never used the machine";
    if (e.signal_to_run) r.kill(e.signal_to_run);
    if (e.kill_command) ::kill(std::stoi(*command), SIGKILL);
    const int status = r.finish();
    ASSERT_TRUE(WIFEXITED(status)) << "kfdsim itself was killed: status " << status;
    EXPECT_EQ(WEXITSTATUS(status), e.exit_code);
    EXPECT_TRUE(gpreempt::testing::process_ended(user_pid)) << "the command's background process outlived the run";
    EXPECT_TRUE(ended_or_killed(user_pid));
    EXPECT_TRUE(daemons_in(tmp).empty()) << "the run's daemon outlived it";
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the private machine directory was left behind";
  }
}

TEST(Kfdsim, WhatAKilledRunLeftBehindStartsNoNewMachine) {
  // Killed outright, run ends nothing itself: its daemon stops by itself (it follows run's pid),
  // and a process the command left in the background keeps using the machine's paths. The shim
  // must not start a daemon for it (a machine nobody stops, in a directory nobody removes).
  Machine m;
  const auto env = run_env(m);
  const auto tmp = m.dir() / "tmp";
  const auto count = m.dir() / "count";
  Child r({build_path("bin/kfdsim").string(), "run", "--", "/bin/sh", "-c",
           leaves_a_user_behind(count) + "exec sleep 600"},
          env);
  const auto user = r.line();
  ASSERT_TRUE(user) << "the command did not start";
  const int user_pid = std::stoi(*user);
  ASSERT_EQ(daemons_in(tmp).size(), 1u) << "the run's daemon is up";
  r.kill(SIGKILL);
  r.wait_status();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((!daemons_in(tmp).empty() || !std::filesystem::is_empty(tmp)) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(daemons_in(tmp).empty() && std::filesystem::is_empty(tmp)) << "the killed run's machine did not go";
  // A few more lookups by the process left behind, after its machine has gone.
  const std::size_t before = lines_in(count);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (lines_in(count) < before + 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(lines_in(count), before + 3) << "the process left behind stopped looking";
  EXPECT_TRUE(daemons_in(tmp).empty()) << "a daemon was started for the process a killed run left behind";
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the killed run's machine directory was made again";
  ::kill(user_pid, SIGKILL);
  ended_or_killed(user_pid);
}

TEST(Kfdsim, StartWithAnOwnerStopsWhenTheOwnerEnds) {
  Machine m;
  Child owner({"/bin/sleep", "600"}, {});
  auto start = kfdsim(m, {"start", "--owner-pid", std::to_string(owner.pid())});
  ASSERT_EQ(WEXITSTATUS(start->finish()), 0) << start->rest();
  auto s = m.status();
  ASSERT_TRUE(s) << "no daemon answers after kfdsim start --owner-pid";
  const int daemon = (*s)["daemon_pid"].get<int>();
  owner.kill(SIGKILL);
  owner.wait_status();
  EXPECT_TRUE(m.wait_daemon_gone(daemon)) << "the machine outlived its owner";
  // An owner that does not exist is refused before anything starts.
  auto bad = kfdsim(m, {"start", "--owner-pid", std::to_string(owner.pid())});
  EXPECT_EQ(WEXITSTATUS(bad->finish()), 2);
  EXPECT_FALSE(m.status()) << "a machine was started for an owner that does not exist";
}

TEST(Kfdsim, RunRefusesAShimPathTheLoaderWouldSplit) {
  // The dynamic loader splits LD_PRELOAD at spaces and colons: a checkout path with either would
  // run the program without the shim. run names the path, says why, and what to do.
  Machine m;
  const auto env0 = run_env(m);
  for (const std::string dir : {"with space", "with:colon"}) {
    SCOPED_TRACE(dir);
    const auto lib = m.dir() / dir / "libkfdshim.so";
    std::filesystem::create_directories(lib.parent_path());
    std::filesystem::create_symlink(build_path("lib/libkfdshim.so"), lib);
    auto env = env0;
    env["KFDSIM_SHIM"] = lib.string();
    Child r({"/bin/sh", "-c", "exec \"$0\" run -- /bin/true 2>&1", build_path("bin/kfdsim").string()}, env);
    const int status = r.finish();
    const std::string out = r.rest();
    EXPECT_EQ(WEXITSTATUS(status), 1) << out;
    EXPECT_NE(out.find("'" + lib.string() + "'"), std::string::npos) << out;
    EXPECT_NE(out.find("splits LD_PRELOAD at spaces and colons"), std::string::npos) << out;
    EXPECT_NE(out.find("KFDSIM_SHIM="), std::string::npos) << out;
    EXPECT_TRUE(std::filesystem::is_empty(m.dir() / "tmp")) << "a machine was made for a run refused";
  }
}
