// gpreemptd's parts that need no simulated machine: the facts read from /proc, the control
// permission, the socket server's framing and peer credentials.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "control_permission.h"
#include "process_facts_reader.h"
#include "process_tracker.h"
#include "sched/config.h"
#include "sched/runtime.h"
#include "socket_server.h"
#include "support/fake_actuator.h"

namespace gpreemptd {
namespace {

TEST(ProcessFactsReader, ReadsThisProcess) {
  ::setenv("GPREEMPT_CLASS", "online", 1);
  auto f = read_process_facts("/proc", ::getpid());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->key.pid, ::getpid());
  EXPECT_GT(f->key.start_time_ticks, 0u);
  EXPECT_EQ(f->ppid, ::getppid());
  EXPECT_EQ(f->uid, ::getuid());
  ASSERT_FALSE(f->cmdline.empty());
  EXPECT_NE(f->exe.find("test_gpreemptd_unit"), std::string::npos) << f->exe;
  EXPECT_FALSE(f->cgroups.empty());
  // environ is the process's initial environment: setenv does not change it, but the variables
  // the test runner set are there.
  EXPECT_EQ(read_process_key("/proc", ::getpid()), f->key);
  auto chain = read_ancestors("/proc", *f);
  if (::getppid() > 1) {
    ASSERT_FALSE(chain.empty());
    EXPECT_EQ(chain[0].key.pid, ::getppid());
  }
}

TEST(ProcessFactsReader, AGoneProcessHasNoFacts) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int st;
  ::waitpid(child, &st, 0);
  EXPECT_FALSE(read_process_facts("/proc", child));
  EXPECT_FALSE(read_process_key("/proc", child));
}

// A /proc file that opens and then fails to read: what a process reaped between the open and the
// read gives (ESRCH). A directory in a fake /proc root does the same (EISDIR) without a race; an
// ifstream turns either into an exception that used to stop the daemon.
TEST(ProcessFactsReader, AFileThatFailsWhenReadIsNoFactsNotAnException) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("gpreemptd-unreadable-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "31" / "stat");
  fs::create_directories(root / "32" / "cmdline");
  std::ofstream(root / "32" / "stat") << "32 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n";
  std::optional<gpreempt::sched::ProcessKey> key;
  EXPECT_NO_THROW(key = read_process_key(root.string(), 31));
  EXPECT_FALSE(key);
  EXPECT_NO_THROW(EXPECT_FALSE(read_process_facts(root.string(), 31)));
  std::optional<gpreempt::sched::ProcessFacts> facts;
  EXPECT_NO_THROW(facts = read_process_facts(root.string(), 32));
  ASSERT_TRUE(facts) << "an unreadable cmdline leaves the other facts";
  EXPECT_TRUE(facts->cmdline.empty());
  EXPECT_TRUE(exiting_or_gone(root.string(), {31, 500}));
  fs::remove_all(root);
}

TEST(ProcessFactsReader, AnExitingOrGoneProcessIsToldFromALiveOne) {
  const auto self = read_process_key("/proc", ::getpid());
  ASSERT_TRUE(self);
  EXPECT_FALSE(exiting_or_gone("/proc", *self));
  EXPECT_TRUE(exiting_or_gone("/proc", {self->pid, self->start_time_ticks + 1}))
      << "the pid names another process";
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  siginfo_t si{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &si, WEXITED | WNOWAIT), 0);  // a zombie
  const auto zombie = read_process_key("/proc", child);
  ASSERT_TRUE(zombie);
  EXPECT_TRUE(exiting_or_gone("/proc", *zombie));
  int st;
  ::waitpid(child, &st, 0);
  EXPECT_TRUE(exiting_or_gone("/proc", *zombie));
}

TEST(ControlPermission, RootMayAndOthersAreToldWhy) {
  EXPECT_FALSE(control_refusal({1, 0, 0, {}, {}}, "", "reload"));
  auto why = control_refusal({1, 1000, 1000, {}, {}}, "", "reload");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("uid 1000"), std::string::npos);
  EXPECT_NE(why->find("control_group"), std::string::npos);
  auto missing = control_refusal({1, 1000, 1000, {}, {}}, "no-such-group-here", "reload");
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find("does not exist"), std::string::npos);
  // gid 0's group (root) as the control group: a peer whose primary gid is 0 may.
  EXPECT_FALSE(control_refusal({::getpid(), 1000, 0, {}, {}}, "root", "reload"));
  // ...and so does one with gid 0 among the supplementary groups it connected with.
  EXPECT_FALSE(control_refusal({::getpid(), 1000, 1000, {4, 0}, {}}, "root", "reload"));
}

// A directory of the test's own, removed at its end: a per-pid name was left behind by every run,
// and a later run whose pid matched (perhaps another user's) could not create its socket there.
struct UnitDir {
  std::string path;
  UnitDir() {
    char tmpl[] = "/tmp/gpreemptd-unit-XXXXXX";
    if (::mkdtemp(tmpl)) path = tmpl;
  }
  ~UnitDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

TEST(SocketServer, AnswersEachLineAndKnowsThePeer) {
  UnitDir dir;
  ASSERT_FALSE(dir.path.empty());
  gpreempt::EventLoop loop;
  const std::string path = dir.path + "/s.sock";
  Peer seen;
  int closed = 0;
  SocketServer server(
      loop, path,
      [&](uint64_t, const Peer& p, const gpreempt::client::Message& m, SocketServer::Received) {
        seen = p;
        return gpreempt::client::ok_reply(m.seq, {{"op", gpreempt::client::to_string(m.op)}});
      },
      [&](uint64_t, const Peer&) {
        ++closed;
        loop.stop();
      });
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            static_cast<std::filesystem::perms>(0666));
  std::string got;
  std::thread client([&] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string two =
        "{\"v\":1,\"seq\":1,\"op\":\"hello\"}\n{\"v\":1,\"seq\":2,\"op\":\"status\"}\nnot json\n";
    ASSERT_EQ(::write(fd, two.data(), two.size()), static_cast<ssize_t>(two.size()));
    char buf[4096];
    while (std::count(got.begin(), got.end(), '\n') < 3) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
  });
  loop.run();
  client.join();
  EXPECT_EQ(seen.pid, ::getpid());
  EXPECT_EQ(seen.uid, ::getuid());
  EXPECT_EQ(closed, 1);
  EXPECT_NE(got.find("\"seq\":1,\"ok\":true,\"result\":{\"op\":\"hello\"}"), std::string::npos)
      << got;
  EXPECT_NE(got.find("\"seq\":2,\"ok\":true"), std::string::npos) << got;
  EXPECT_NE(got.find("\"error\":\"bad_request\""), std::string::npos) << got;
}

TEST(SocketServer, RefusesToReplaceALiveDaemonButReplacesAStaleSocket) {
  UnitDir dir;
  ASSERT_FALSE(dir.path.empty());
  gpreempt::EventLoop loop;
  const std::string path = dir.path + "/live.sock";
  auto noop = [](uint64_t, const Peer&, const gpreempt::client::Message& m,
                 SocketServer::Received) { return gpreempt::client::ok_reply(m.seq); };
  {
    SocketServer first(loop, path, noop, nullptr);
    EXPECT_THROW(SocketServer(loop, path, noop, nullptr), std::runtime_error);
  }
  // A stale socket file (its daemon was killed): bind a socket and close it without unlinking.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
  EXPECT_NO_THROW(SocketServer(loop, path, noop, nullptr));
}

// A client socket connected to `path` (the server accepts it when its loop runs).
int connect_to(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof a.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(SocketServer, RebindMovesTheListenerAndKeepsConnectionsOrKeepsItAllOnFailure) {
  UnitDir unit;
  ASSERT_FALSE(unit.path.empty());
  gpreempt::EventLoop loop;
  const std::string dir = unit.path;
  const std::string a = dir + "/a.sock", b = dir + "/moved/b.sock";
  int answered = 0;
  SocketServer server(
      loop, a,
      [&](uint64_t, const Peer&, const gpreempt::client::Message& m, SocketServer::Received) {
        if (++answered == 2) loop.stop();
        return gpreempt::client::ok_reply(m.seq);
      },
      nullptr);
  const int early = connect_to(a);  // connected before the move, not accepted yet
  ASSERT_GE(early, 0);
  server.rebind(b);
  EXPECT_EQ(server.path(), b);
  EXPECT_FALSE(std::filesystem::exists(a)) << "the old socket file is removed";
  EXPECT_EQ(connect_to(a), -1);
  const int late = connect_to(b);
  ASSERT_GE(late, 0);
  const std::string hello = "{\"v\":1,\"seq\":7,\"op\":\"hello\"}\n";
  for (int fd : {early, late})  // a connection lost in the move fails here (EPIPE), not later
    ASSERT_EQ(::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(hello.size()))
        << (fd == early ? "the connection made before the move was lost" : "new connection");
  loop.run();
  for (int fd : {early, late}) {
    char buf[256];
    ssize_t n = ::read(fd, buf, sizeof buf);
    ASSERT_GT(n, 0);
    EXPECT_NE(std::string(buf, static_cast<std::size_t>(n)).find("\"seq\":7,\"ok\":true"),
              std::string::npos);
  }
  EXPECT_EQ(server.connections(), 2u);
  // A path that cannot be bound: an exception, and the running socket untouched.
  std::ofstream(dir + "/file") << "";
  EXPECT_THROW(server.rebind(dir + "/file/c.sock"), std::runtime_error);
  EXPECT_EQ(server.path(), b);
  const int still = connect_to(b);
  EXPECT_GE(still, 0);
  for (int fd : {early, late, still}) ::close(fd);
  std::filesystem::remove(dir + "/file");
}

}  // namespace
}  // namespace gpreemptd

namespace gpreemptd {
namespace {

namespace fs = std::filesystem;
namespace sched = gpreempt::sched;

// A fake /proc and /sys/class/kfd/kfd: one process with one queue on GPU 7.
struct FakeSystem {
  fs::path root = fs::temp_directory_path() / ("gpreemptd-tracker-" + std::to_string(::getpid()));
  FakeSystem() { fs::remove_all(root); }
  ~FakeSystem() { fs::remove_all(root); }
  gpreempt::discovery::SystemRoots roots() const {
    gpreempt::discovery::SystemRoots r;
    r.proc = (root / "proc").string();
    r.kfd_sysfs = (root / "kfd").string();
    return r;
  }
  void process(int pid, uint64_t start, const std::string& env) {
    const fs::path p = root / "proc" / std::to_string(pid);
    fs::create_directories(p);
    std::ofstream(p / "stat") << pid << " (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << start
                              << " 0 0\n";
    std::ofstream(p / "cmdline") << "worker";
    std::ofstream(p / "status") << "Uid:\t0\t0\t0\t0\n";
    std::ofstream(p / "environ") << env << '\0';
    const fs::path q = root / "kfd" / "proc" / std::to_string(pid) / "queues" / "0";
    fs::create_directories(q);
    std::ofstream(q / "type") << "0";
    std::ofstream(q / "gpuid") << "7";
    std::ofstream(q / "size") << "4096";
  }
  void exit(int pid) {
    fs::remove_all(root / "proc" / std::to_string(pid));
    fs::remove_all(root / "kfd" / "proc" / std::to_string(pid));
  }
};

std::string describe(const sched::Event& e) {
  if (auto* a = std::get_if<sched::event::ProcessAppeared>(&e))
    return "appeared " + sched::to_string(a->key);
  if (auto* c = std::get_if<sched::event::ProcessClassified>(&e))
    return "classified " + sched::to_string(c->key) + " " + c->class_name.value_or("none") +
           " gpus " + std::to_string(c->gpus.size());
  if (auto* x = std::get_if<sched::event::ProcessExited>(&e))
    return "exited " + sched::to_string(x->key);
  return "other";
}

// What the tracker's events go to, as in the daemon: a Runtime, whose registry the tracker reads.
// `seen` lists each event as the tracker sent it, and each process the Runtime says left.
struct Discovered {
  std::vector<std::string> seen;
  gpreempt::testing::FakeActuator actuator{[](const sched::event::ActuationCompleted&) {}};
  sched::Runtime runtime{sched::Classifier(sched::builtin_config().classes).classes(),
                         sched::builtin_config().policy,
                         {&actuator,
                          [](std::optional<sched::Time>) {},
                          {},
                          {},
                          {},
                          [this](sched::Time, const sched::ProcessKey& k) {
                            seen.push_back("left " + sched::to_string(k));
                          }}};
  const sched::ProcessRegistry& registry() const { return runtime.processes(); }
  ProcessTracker::Sink sink(std::function<void()> also = {}) {
    return [this, also](sched::Event e) {
      if (also) also();
      seen.push_back(describe(e));
      runtime.dispatch(sched::Time{0}, e);
    };
  }
  const sched::ProcessRecord& at(int pid) const {
    const sched::ProcessRecord* p = registry().with_pid(pid);
    if (!p) throw std::out_of_range("no process with pid " + std::to_string(pid));
    return *p;
  }
};

TEST(ProcessTracker, AReusedPidIsANewProcessAndTheOldOneExits) {
  FakeSystem sys;
  sys.process(4242, 100, "GPREEMPT_CLASS=offline");
  gpreempt::EventLoop loop;
  Discovered d;
  auto& seen = d.seen;
  ProcessTracker tracker(loop, sys.roots(), std::chrono::milliseconds(20), d.registry(), d.sink());
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  tracker.scan();
  EXPECT_EQ(seen,
            (std::vector<std::string>{"appeared 4242@100", "classified 4242@100 offline gpus 1"}));
  seen.clear();
  tracker.scan();
  EXPECT_TRUE(seen.empty()) << "nothing changed";

  // Same pid, another start time: the pid was reused by an unclassified process.
  sys.exit(4242);
  sys.process(4242, 200, "OTHER=1");
  tracker.scan();
  EXPECT_EQ(seen, (std::vector<std::string>{"exited 4242@100", "left 4242@100", "appeared 4242@200",
                                            "classified 4242@200 none gpus 1"}));
  EXPECT_EQ(d.at(4242).key, (sched::ProcessKey{4242, 200}));
  EXPECT_EQ(d.registry().size(), 1u);
  seen.clear();
  sys.exit(4242);
  tracker.scan();
  EXPECT_EQ(seen, (std::vector<std::string>{"exited 4242@200", "left 4242@200"}));
  EXPECT_EQ(d.registry().size(), 0u);
}

// A report of a new process under a known pid, with no exit reported before it (find() read the
// newcomer, or a pass missed the exit): the registry retires the old process as it admits the new.
TEST(ProcessTracker, ANewcomerUnderAKnownPidRetiresTheOldProcessWithoutAnExitReport) {
  FakeSystem sys;
  sys.process(4242, 100, "GPREEMPT_CLASS=offline");
  gpreempt::EventLoop loop;
  Discovered d;
  ProcessTracker tracker(loop, sys.roots(), std::chrono::hours(1), d.registry(), d.sink());
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  tracker.scan();
  TrackedProcess next;
  static_cast<sched::ProcessDescription&>(next) = d.at(4242).description;
  next.key = {4242, 200};
  next.read_at = std::chrono::steady_clock::now();
  d.seen.clear();
  tracker.apply(DiscoveryBatch{{}, {next}});
  EXPECT_EQ(d.seen, (std::vector<std::string>{"appeared 4242@200", "left 4242@100",
                                              "classified 4242@200 none gpus 1"}));
  EXPECT_EQ(d.at(4242).key, (sched::ProcessKey{4242, 200}));
  EXPECT_EQ(d.registry().size(), 1u);
}

// Discovery of one process must not stop the scan, whatever its files do.
TEST(ProcessTracker, AProcessWhoseFilesCannotBeReadDoesNotStopTheScan) {
  FakeSystem sys;
  sys.process(4242, 100, "GPREEMPT_CLASS=offline");
  sys.process(4243, 100, "GPREEMPT_CLASS=offline");
  fs::remove(sys.root / "proc" / "4243" / "stat");
  fs::create_directories(sys.root / "proc" / "4243" / "stat");  // opens, then fails to read
  gpreempt::EventLoop loop;
  Discovered d;
  ProcessTracker tracker(loop, sys.roots(), std::chrono::milliseconds(20), d.registry(), d.sink());
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  ASSERT_NO_THROW(tracker.scan());
  EXPECT_EQ(d.seen,
            (std::vector<std::string>{"appeared 4242@100", "classified 4242@100 offline gpus 1"}));
  EXPECT_EQ(d.registry().with_pid(4243), nullptr);
}

// A pass looks at every new process at once, however many started together; known ones are looked
// at again kRevisitsPerPass per pass (their changed GPUs): those still without queues at every
// pass, the others in turn. Exits are seen at every pass.
TEST(ProcessTracker, APassClassifiesEveryNewProcessAndRevisitsKnownOnesInTurn) {
  FakeSystem sys;
  constexpr int kProcesses = 10;
  for (int i = 0; i < kProcesses; ++i) sys.process(5001 + i, 100, "GPREEMPT_CLASS=offline");
  sys.process(5100, 100, "GPREEMPT_CLASS=offline");
  fs::remove_all(sys.root / "kfd" / "proc" / "5100" / "queues" / "0");  // no queue yet
  gpreempt::EventLoop loop;
  Discovered d;
  auto& seen = d.seen;
  ProcessTracker tracker(loop, sys.roots(), std::chrono::milliseconds(20), d.registry(), d.sink());
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  tracker.scan();
  EXPECT_EQ(d.registry().size(), static_cast<std::size_t>(kProcesses + 1));
  EXPECT_EQ(seen.size(), 2u * (kProcesses + 1)) << "appeared + classified each, in one pass";
  const std::size_t k = DiscoveryWorker::kRevisitsPerPass;
  ASSERT_LT(k, static_cast<std::size_t>(kProcesses));
  // Two known processes open a queue on another GPU: both are seen within one round.
  auto add_queue = [&](int pid, int id, int gpu) {
    const fs::path q =
        sys.root / "kfd" / "proc" / std::to_string(pid) / "queues" / std::to_string(id);
    fs::create_directories(q);
    std::ofstream(q / "type") << "0";
    std::ofstream(q / "gpuid") << gpu;
    std::ofstream(q / "size") << "4096";
  };
  for (int pid : {5001, 5001 + kProcesses - 1}) add_queue(pid, 1, 8);
  seen.clear();
  // The process without queues takes one look of every pass.
  const std::size_t round = (kProcesses + k - 2) / (k - 1);
  for (std::size_t i = 0; i < round; ++i) tracker.scan();
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"classified 5001@100 offline gpus 2",
                                            "classified 5010@100 offline gpus 2"}));
  // Its first queue is seen at the next pass, whatever the turn.
  add_queue(5100, 0, 7);
  seen.clear();
  tracker.scan();
  EXPECT_EQ(seen, (std::vector<std::string>{"classified 5100@100 offline gpus 1"}));
  sys.exit(5005);
  seen.clear();
  tracker.scan();
  EXPECT_EQ(seen, (std::vector<std::string>{"exited 5005@100", "left 5005@100"}));
}

// Runs `loop` until `done` holds (checked after each batch of events), at most `limit`.
bool run_until(gpreempt::EventLoop& loop, const std::function<bool()>& done,
               std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto timer = loop.add_timer([&] { loop.stop(); });
  loop.arm_at(timer, std::chrono::steady_clock::now() + limit);
  loop.set_after_batch([&] {
    if (done()) loop.stop();
  });
  if (!done()) loop.run();
  loop.set_after_batch({});
  loop.unwatch(timer);
  return done();
}

// The worker thread reads and classifies; what it finds reaches the scheduler on the loop's thread
// (the events' sink runs there and nowhere else): new processes, a reclassification after
// set_classifier (a SIGHUP reload), and exits.
TEST(ProcessTracker, TheWorkersFindingsAreAppliedOnTheLoopThread) {
  FakeSystem sys;
  sys.process(4242, 100, "GPREEMPT_CLASS=offline");
  gpreempt::EventLoop loop;
  Discovered d;
  auto& seen = d.seen;
  int off_loop_thread = 0;
  const auto loop_thread = std::this_thread::get_id();
  ProcessTracker tracker(loop, sys.roots(), std::chrono::milliseconds(5), d.registry(), d.sink([&] {
    if (std::this_thread::get_id() != loop_thread) ++off_loop_thread;
  }));
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  tracker.start();  // its first pass runs here
  EXPECT_EQ(seen,
            (std::vector<std::string>{"appeared 4242@100", "classified 4242@100 offline gpus 1"}));

  sys.process(4243, 100, "GPREEMPT_CLASS=online");
  seen.clear();
  // The worker may list it before its queue's files are written (as KFD's sysfs may show a
  // process before its first queue): then its GPU comes in a later ProcessClassified.
  ASSERT_TRUE(run_until(
      loop, [&] { return !seen.empty() && seen.back() == "classified 4243@100 online gpus 1"; }));
  EXPECT_EQ(seen.front(), "appeared 4243@100");

  // A reload: the offline class is now called batch; the online process keeps its class.
  auto classes = sched::builtin_config().classes;
  for (auto& r : classes)
    if (r.cls.name == "offline") r.cls.name = "batch";
  seen.clear();
  tracker.set_classifier(std::make_shared<const sched::Classifier>(classes));
  ASSERT_TRUE(run_until(loop, [&] { return !seen.empty(); }));
  EXPECT_EQ(seen, (std::vector<std::string>{"classified 4242@100 batch gpus 1"}));
  EXPECT_EQ(d.at(4242).class_name, "batch");

  sys.exit(4242);
  seen.clear();
  ASSERT_TRUE(run_until(loop, [&] { return !seen.empty(); }));
  EXPECT_EQ(seen, (std::vector<std::string>{"exited 4242@100", "left 4242@100"}));
  EXPECT_EQ(off_loop_thread, 0) << "an event reached the scheduler from another thread";
}

// A hint can come from a process the worker has not reported yet: find() reads it at once, and the
// worker's later report of the same process changes nothing.
TEST(ProcessTracker, FindReadsAProcessDiscoveryHasNotReportedYetOnce) {
  FakeSystem sys;
  gpreempt::EventLoop loop;
  Discovered d;
  auto& seen = d.seen;
  // The worker passes only when woken (as find() does): it never sees the files half-written.
  ProcessTracker tracker(loop, sys.roots(), std::chrono::hours(1), d.registry(), d.sink());
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  tracker.start();
  sys.process(4244, 100, "GPREEMPT_CLASS=online");
  const sched::ProcessRecord* p = tracker.find(4244);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->class_name, "online");
  EXPECT_EQ(seen,
            (std::vector<std::string>{"appeared 4244@100", "classified 4244@100 online gpus 1"}));
  EXPECT_EQ(tracker.find(4245), nullptr) << "not listed by KFD: no GPU process";
  // The pass find() woke reports the same key with the same class and GPUs: no news.
  const auto timer = loop.add_timer([&] { loop.stop(); });
  loop.arm_at(timer, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
  loop.run();
  EXPECT_EQ(seen,
            (std::vector<std::string>{"appeared 4244@100", "classified 4244@100 online gpus 1"}));
}

// A pass hands its new processes over classified as soon as their /proc facts are read, before it
// reads any queue (on the simulator each sysfs read is a round trip to kfdsimd, and a burst of new
// processes used to wait for all of them); the queues' GPUs follow in what the pass returns.
TEST(DiscoveryWorker, APassHandsItsNewProcessesOverClassifiedBeforeReadingTheirQueues) {
  FakeSystem sys;
  sys.process(4250, 100, "GPREEMPT_CLASS=offline");
  sys.process(4251, 100, "GPREEMPT_CLASS=online");
  DiscoveryWorker worker(sys.roots(), std::chrono::hours(1));
  worker.set_classifier(std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  std::vector<DiscoveryBatch> early;
  const DiscoveryBatch rest = worker.pass([&](DiscoveryBatch b) {
    early.push_back(std::move(b));
    // A queue created after the hand-over is in the records the pass returns: it read the queues
    // after it handed the classes over.
    const fs::path q = sys.root / "kfd" / "proc" / "4250" / "queues" / "1";
    fs::create_directories(q);
    std::ofstream(q / "type") << "0";
    std::ofstream(q / "gpuid") << "8";
    std::ofstream(q / "size") << "4096";
  });
  ASSERT_EQ(early.size(), 1u);
  ASSERT_EQ(early[0].seen.size(), 2u);
  EXPECT_EQ(early[0].seen[0].key, (sched::ProcessKey{4250, 100}));
  EXPECT_EQ(early[0].seen[0].class_name, "offline");
  EXPECT_EQ(early[0].seen[1].class_name, "online");
  for (const auto& p : early[0].seen) {
    EXPECT_FALSE(p.queues_read);
    EXPECT_TRUE(p.queues.empty());
  }
  ASSERT_EQ(rest.seen.size(), 2u);
  EXPECT_TRUE(rest.seen[0].queues_read);
  EXPECT_EQ(rest.seen[0].class_name, "offline");
  EXPECT_EQ(rest.seen[0].gpus(), (std::vector<sched::GpuId>{7, 8}));
  EXPECT_EQ(rest.seen[1].gpus(), (std::vector<sched::GpuId>{7}));

  // Without a hand-over, one batch of whole records (the daemon's first pass, before it is ready).
  sys.process(4252, 100, "GPREEMPT_CLASS=offline");
  const DiscoveryBatch whole = worker.pass();
  ASSERT_EQ(whole.seen.size(), 1u);
  EXPECT_TRUE(whole.seen[0].queues_read);
  EXPECT_EQ(whole.seen[0].class_name, "offline");
  EXPECT_EQ(whole.seen[0].gpus(), (std::vector<sched::GpuId>{7}));
}

// A class handed over before the queues were read says nothing of the GPUs: a process the loop
// already holds on its GPUs (find() read it while the pass ran) keeps them, and is not dropped from
// its GPU's arbiter until the record with the queues comes.
TEST(ProcessTracker, AClassWithoutItsQueuesKeepsTheGpusTheLoopHolds) {
  FakeSystem sys;
  sys.process(4260, 100, "GPREEMPT_CLASS=offline");
  gpreempt::EventLoop loop;
  Discovered d;
  auto& seen = d.seen;
  ProcessTracker tracker(loop, sys.roots(), std::chrono::hours(1), d.registry(), d.sink());
  tracker.set_classifier(
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes));
  tracker.scan();
  ASSERT_EQ(d.at(4260).gpus, (std::vector<sched::GpuId>{7}));
  seen.clear();
  TrackedProcess p;
  static_cast<sched::ProcessDescription&>(p) = d.at(4260).description;
  p.key = d.at(4260).key;
  p.class_name = "online";
  p.queues.clear();
  p.queues_read = false;
  p.read_at = std::chrono::steady_clock::now();
  tracker.apply(DiscoveryBatch{{}, {p}});
  EXPECT_EQ(seen, (std::vector<std::string>{"classified 4260@100 online gpus 1"}));
  EXPECT_EQ(d.at(4260).gpus, (std::vector<sched::GpuId>{7}));
  // The record with the queues read decides the GPUs.
  p.queues = {{8, 1}};
  p.queues_read = true;
  p.read_at = std::chrono::steady_clock::now();
  seen.clear();
  tracker.apply(DiscoveryBatch{{}, {p}});
  EXPECT_EQ(seen, (std::vector<std::string>{"classified 4260@100 online gpus 1"}));
  EXPECT_EQ(d.at(4260).gpus, (std::vector<sched::GpuId>{8}));
}

// A process find() read on the loop thread, which exits before the worker's next pass lists it, is
// still reported exited: the worker adopts what find() read.
TEST(DiscoveryWorker, AnAdoptedProcessThatExitsBeforeAPassListsItIsReportedExited) {
  FakeSystem sys;
  DiscoveryWorker worker(sys.roots(), std::chrono::hours(1));
  const auto classifier =
      std::make_shared<const sched::Classifier>(sched::builtin_config().classes);
  worker.set_classifier(classifier);
  sys.process(4247, 100, "GPREEMPT_CLASS=online");
  auto p = read_tracked_process(sys.roots(), 4247, classifier.get(), nullptr);
  ASSERT_TRUE(p);
  worker.adopt(*p);
  sys.exit(4247);
  const DiscoveryBatch b = worker.pass();
  EXPECT_EQ(b.exited, (std::vector<sched::ProcessKey>{{4247, 100}}));
  EXPECT_TRUE(b.seen.empty());
}

}  // namespace
}  // namespace gpreemptd
