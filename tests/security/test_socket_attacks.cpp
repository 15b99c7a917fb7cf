// Attacks on gpreemptd's socket and request path (docs/gpreemptd.md, "The socket's limits" and
// "Who a peer is"), each against a real daemon on a simulated machine: a request held open, a
// hint flood, a hint under another uid's credentials, a connection flood, a peer that never reads,
// descriptor exhaustion, the socket file's mode and directory, status seen by another user, and a
// pid reused under a live connection. Every wait is a poll with a deadline: the tests assert what
// happened and in which order, never how fast.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <linux/sockios.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "daemon_rig.h"

namespace gpreempt::testing {
namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

// Classes that leave no doubt who is what whatever the rules about self-declared classes: offline
// by environment (it preempts nobody), online by uid (a process cannot choose its uid). Neither
// the hard bound nor the starvation guard ends a suspension during a test.
std::string classes(int online_uid = static_cast<int>(::geteuid())) {
  return "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" "
         "}\n\n[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = " +
         std::to_string(online_uid) +
         " }\n\n[policy]\nmax_suspension_ms = 600000\nstarvation_window_ms = 1000000\n"
         "starvation_min_run_ms = 1\n";
}

std::unique_ptr<Child> daemon_with(DaemonRig& rig, const std::string& text) {
  const auto config = rig.file("socket-attacks.toml");
  write_file(config, text);
  return rig.start_daemon({"--config", config.string()});
}

int connect_fd(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof a.sun_path - 1);
  timeval limit{10, 0};  // a daemon that stops answering fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string line(const std::string& op, int seq, const std::string& extra = "") {
  return "{\"v\":1,\"seq\":" + std::to_string(seq) + ",\"op\":\"" + op + "\"" + extra + "}\n";
}

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads up to `want` reply lines (fewer on EOF, reset or the receive timeout), parsed.
std::vector<nlohmann::json> read_replies(int fd, std::size_t want, bool* closed = nullptr) {
  std::vector<nlohmann::json> out;
  std::string buf;
  char chunk[65536];
  if (closed) *closed = false;
  while (out.size() < want) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) {
      if (closed) *closed = n == 0 || errno == ECONNRESET;
      break;
    }
    buf.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
      out.push_back(nlohmann::json::parse(buf.substr(0, nl), nullptr, false));
      buf.erase(0, nl + 1);
    }
  }
  return out;
}

nlohmann::json ask_on(int fd, const std::string& op, int seq, const std::string& extra = "") {
  if (!write_all(fd, line(op, seq, extra))) return nullptr;
  auto r = read_replies(fd, 1);
  return r.empty() ? nlohmann::json() : r[0];
}

// `gpreempt ctl ARGS --socket <the rig's>` as `uid`.
RunResult ctl(DaemonRig& rig, std::vector<std::string> args, int uid = -1) {
  std::vector<std::string> argv{bin("gpreempt").string(), "ctl"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--socket", rig.socket()});
  return run(argv, {}, uid);
}

// An unprivileged online process that begins a request and never ends it (nor closes its
// connection): the daemon ends it at max_request_ms, and counts it.
TEST(SocketAttacks, ABeginWithoutAnEndExpires) {
  // An ordinary user when the test may run one (root's own processes otherwise).
  const bool as_nobody = ::geteuid() == 0 && can_run_as(65534, "gpreemptd_test_peer");
  DaemonRig rig(as_nobody ? std::vector<std::string>{"--shared"} : std::vector<std::string>{});
  const int uid = as_nobody ? 65534 : static_cast<int>(::geteuid());
  auto daemon = daemon_with(rig, classes(uid) + "max_request_ms = 300\n");
  ASSERT_TRUE(rig.status().is_object()) << daemon->stderr_text();
  auto offline = rig.workload({"GPREEMPT_CLASS=offline"});
  auto online = rig.peer({}, 0, {}, as_nobody ? 65534 : -1);
  ASSERT_EQ(command(*online, "queue").get<std::string>().rfind("ok ", 0), 0u);
  ASSERT_EQ(command(*online, "connect"), "ok");
  wait_classified(rig, offline->pid(), "offline");
  wait_classified(rig, online->pid(), "online");

  ASSERT_TRUE(command(*online, "begin 1")["ok"].get<bool>());
  EXPECT_TRUE(eventually([&] { return rig.all_suspended(offline->pid()); })) << rig.status().dump();
  // Nothing else happens: the expiry alone resumes it.
  EXPECT_TRUE(eventually([&] { return rig.none_suspended(offline->pid()); }))
      << "a begin without an end holds the offline job: " << rig.status().dump();
  EXPECT_TRUE(eventually([&] { return rig.status()["daemon"]["requests_expired"] == 1; }))
      << rig.status().dump();
  EXPECT_EQ(rig.process(online->pid())["open_requests"], 0) << rig.status().dump();
  // The client's late end is no error of its own.
  auto end = command(*online, "end 1");
  EXPECT_TRUE(end["ok"].get<bool>()) << end.dump();
  EXPECT_EQ(end["result"]["expired"], true) << end.dump();
  EXPECT_EQ(rig.status()["daemon"]["max_request_ms"], 300);
}

// A flood of hints on one connection: past the bucket, each is refused with a clear error and
// counted, and none of them reaches the scheduler.
TEST(SocketAttacks, AHintFloodIsRateLimited) {
  DaemonRig rig;
  auto daemon = daemon_with(rig, "[daemon]\nhint_rate = 1\nhint_burst = 2\n\n" + classes());
  ASSERT_TRUE(rig.status().is_object()) << daemon->stderr_text();
  auto online = rig.peer({});
  ASSERT_EQ(command(*online, "queue").get<std::string>().rfind("ok ", 0), 0u);
  ASSERT_EQ(command(*online, "connect"), "ok");
  wait_classified(rig, online->pid(), "online");
  int refused = 0, accepted = 0;
  for (int i = 1; i <= 20; ++i) {
    auto r = command(*online, "begin " + std::to_string(i));
    if (r["ok"].get<bool>()) {
      ++accepted;
      ASSERT_TRUE(command(*online, "end " + std::to_string(i))["ok"].get<bool>());
      continue;
    }
    ++refused;
    EXPECT_EQ(r["error"], "unavailable") << r.dump();
    EXPECT_NE(r["message"].get<std::string>().find("faster than 1 per second"), std::string::npos)
        << r.dump();
  }
  // 20 begins in fewer than 18 s: the burst of 2 and a token per second cannot cover them.
  EXPECT_GT(refused, 0);
  EXPECT_EQ(rig.status()["daemon"]["hints_rate_limited"], refused) << rig.status().dump();
  // What was refused never started: only the accepted ones are the class's requests.
  EXPECT_TRUE(eventually([&] {
    const auto s = rig.status();
    for (const auto& c : s["classes"])
      if (c["name"] == "online") return c["stats"]["request_latency_ms"]["count"] == accepted;
    return false;
  })) << rig.status().dump();
}

// A process that connected as one uid and runs as another (it dropped its privileges after
// connecting): the connection's credentials are not the process's, its hints do not count.
TEST(SocketAttacks, AHintFromAnotherUidThanTheProcessIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change the peer's uid";
  if (!can_run_as(65534, "gpreemptd_test_peer"))
    GTEST_SKIP() << "uid 65534 cannot reach the build's programs";
  DaemonRig rig({"--shared"});
  auto daemon = daemon_with(rig, classes(65534));
  ASSERT_TRUE(rig.status().is_object()) << daemon->stderr_text();
  auto offline = rig.workload({"GPREEMPT_CLASS=offline"});
  auto peer = rig.peer({});
  ASSERT_EQ(command(*peer, "connect"), "ok");  // as root
  ASSERT_EQ(command(*peer, "become 65534"), "ok");
  ASSERT_EQ(command(*peer, "queue").get<std::string>().rfind("ok ", 0), 0u);
  wait_classified(rig, offline->pid(), "offline");
  wait_classified(rig, peer->pid(), "online");

  auto r = command(*peer, "begin 1");
  EXPECT_FALSE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["error"], "not_permitted") << r.dump();
  EXPECT_NE(r["message"].get<std::string>().find("runs as uid 65534 but connected as uid 0"),
            std::string::npos)
      << r.dump();
  EXPECT_TRUE(rig.none_suspended(offline->pid())) << rig.status().dump();
  EXPECT_EQ(rig.process(peer->pid())["open_requests"], 0) << rig.status().dump();
}

// One uid opens connections until refused: past max_connections_per_uid each new one is told why
// and closed, and another uid is still served.
TEST(SocketAttacks, AConnectionFloodFromOneUidIsCapped) {
  DaemonRig rig({"--shared"});
  auto daemon = rig.start_daemon();  // the default cap (128)
  std::vector<int> held;
  int refused = 0;
  std::string refusal;
  for (int i = 0; i < 200; ++i) {
    int fd = connect_fd(rig.socket());
    ASSERT_GE(fd, 0);
    auto r = ask_on(fd, "hello", 1);
    if (r.is_object() && r["ok"] == true) {
      held.push_back(fd);
      continue;
    }
    ++refused;
    if (r.is_object()) refusal = r.value("message", "");
    ::close(fd);
  }
  EXPECT_EQ(held.size(), 128u);
  EXPECT_EQ(refused, 72);
  EXPECT_NE(refusal.find("already holds 128 connections"), std::string::npos) << refusal;
  // Another uid is served while this one is at its cap.
  if (::geteuid() == 0 && can_run_as(65534, "gpreempt")) {
    auto r = ctl(rig, {"status", "--json"}, 65534);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
  }
  for (int fd : held) ::close(fd);
  EXPECT_TRUE(eventually([&] {
    const auto s = rig.status();
    return s.is_object() && s["daemon"]["connections"]["refused_per_uid_cap"] == 72;
  })) << rig.status().dump();
}

// A connection that sends nothing is closed after idle_timeout_ms, and counted.
TEST(SocketAttacks, AnIdleConnectionIsClosed) {
  DaemonRig rig;
  auto daemon = daemon_with(rig, "[daemon]\nidle_timeout_ms = 200\n\n" + classes());
  ASSERT_TRUE(rig.status().is_object()) << daemon->stderr_text();
  const int fd = connect_fd(rig.socket());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ask_on(fd, "hello", 1)["ok"], true);
  bool closed = false;
  EXPECT_TRUE(read_replies(fd, 1, &closed).empty());
  EXPECT_TRUE(closed) << "an idle connection stays open";
  ::close(fd);
  EXPECT_GE(rig.status()["daemon"]["connections"]["closed_idle"].get<int>(), 1)
      << rig.status().dump();
}

// A peer that asks and does not read: the loop does not wait for it — another peer is answered
// while its replies are still queued, and it then receives every one of them; a peer whose unread
// replies pass the output bound is dropped.
TEST(SocketAttacks, ASlowReaderNeitherStallsTheLoopNorLosesItsReplies) {
  DaemonRig rig;
  auto daemon = rig.start_daemon();
  const int slow = connect_fd(rig.socket());
  ASSERT_GE(slow, 0);
  // More replies than the socket buffers hold (a status document is over 1 KB), fewer than the
  // output bound (4 MiB).
  constexpr int kAsked = 1000;
  std::string burst;
  for (int i = 1; i <= kAsked; ++i) burst += line("status", i);
  ASSERT_TRUE(write_all(slow, burst));
  // The daemon has read them all once it answers this one on the same connection... which it
  // cannot send before the others: so ask another peer instead, while `slow` reads nothing.
  const int other = connect_fd(rig.socket());
  ASSERT_GE(other, 0);
  auto hello = ask_on(other, "hello", 1);
  ASSERT_TRUE(hello.is_object() && hello["ok"] == true) << hello.dump();
  bool closed = false;
  auto replies = read_replies(slow, kAsked, &closed);
  EXPECT_EQ(replies.size(), static_cast<std::size_t>(kAsked))
      << "the daemon gave up on a peer that reads late (closed: " << closed << ")";
  if (!replies.empty()) {
    EXPECT_EQ(replies.back()["seq"], kAsked);
  }
  ::close(slow);

  // One that sends its requests, shuts its sending side (as `echo ... | socat` does) and only then
  // reads: every reply still comes, then the end of the stream.
  const int half = connect_fd(rig.socket());
  ASSERT_GE(half, 0);
  ASSERT_TRUE(write_all(half, burst));
  ASSERT_EQ(::shutdown(half, SHUT_WR), 0);
  // The daemon has read every request (nothing of ours is left in its queue), then its end of file:
  // readable since before this hello, which it answers after it.
  ASSERT_TRUE(eventually([&] {
    int unread = -1;
    return ::ioctl(half, SIOCOUTQ, &unread) == 0 && unread == 0;
  }));
  ASSERT_EQ(ask_on(other, "hello", 2)["ok"], true);
  auto all = read_replies(half, kAsked + 1, &closed);
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kAsked)) << "closed: " << closed;
  EXPECT_TRUE(closed);
  ::close(half);

  // One that never reads: dropped at the bound, and counted.
  const int never = connect_fd(rig.socket());
  ASSERT_GE(never, 0);
  ::fcntl(never, F_SETFL, O_NONBLOCK);
  std::string many;
  for (int i = 1; i <= 8000; ++i) many += line("status", i);
  std::size_t off = 0;
  bool dropped = false;
  ASSERT_TRUE(eventually([&] {
    while (off < many.size()) {
      ssize_t n = ::send(never, many.data() + off, many.size() - off, MSG_NOSIGNAL);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) dropped = true;
      break;
    }
    const auto s = ask_on(other, "status", 2);
    return dropped || (s.is_object() && s["result"]["daemon"]["connections"]["dropped_slow_reader"] == 1);
  })) << "sent " << off << " bytes";
  auto s = ask_on(other, "status", 3);
  EXPECT_EQ(s["result"]["daemon"]["connections"]["dropped_slow_reader"], 1) << s.dump();
  ::close(never);
  ::close(other);
}

// The daemon out of descriptors (RLIMIT_NOFILE lowered under it): a new peer is accepted and told,
// not left in the backlog of a listener the level-triggered loop spins on; discovery keeps the
// processes it knows rather than reporting them exited; once descriptors are free it serves again.
TEST(SocketAttacks, DescriptorExhaustionRefusesTheNewestPeerAndKeepsServing) {
  DaemonRig rig;
  auto daemon = rig.start_daemon();
  auto offline = rig.workload({"GPREEMPT_CLASS=offline"});
  wait_classified(rig, offline->pid(), "offline");
  const int held = connect_fd(rig.socket());
  ASSERT_GE(held, 0);
  ASSERT_EQ(ask_on(held, "hello", 1)["ok"], true);

  std::size_t open_now = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(daemon->pid()) + "/fd"))
    ++open_now;
  rlimit normal{};
  ASSERT_EQ(::prlimit(daemon->pid(), RLIMIT_NOFILE, nullptr, &normal), 0) << std::strerror(errno);
  const rlimit low{open_now + 8, normal.rlim_max};
  ASSERT_EQ(::prlimit(daemon->pid(), RLIMIT_NOFILE, &low, nullptr), 0) << std::strerror(errno);

  std::vector<int> flood;
  int refused = 0;
  std::string refusal;
  for (int i = 0; i < 16; ++i) {
    int fd = connect_fd(rig.socket());
    ASSERT_GE(fd, 0);
    // The daemon may accept, refuse and close before this write (a descheduled test on a loaded
    // machine): the write then fails, but its refusal is still in the receive buffer.
    const bool written = write_all(fd, line("hello", 1));
    bool closed = false;
    auto r = read_replies(fd, 1, &closed);
    if (!written && r.empty()) {
      ++refused;
      ::close(fd);
      continue;
    }
    if (!r.empty() && r[0]["ok"] == true) {
      flood.push_back(fd);
      continue;
    }
    // Told (or at least closed), not left waiting.
    EXPECT_TRUE(!r.empty() || closed) << "connection " << i << " neither answered nor closed";
    if (!r.empty()) refusal = r[0].value("message", "");
    ++refused;
    ::close(fd);
  }
  EXPECT_GT(refused, 0);
  EXPECT_NE(refusal.find("no file descriptor left"), std::string::npos) << refusal;
  // The held connection still works; discovery failed to list but kept what it knew.
  nlohmann::json status;
  EXPECT_TRUE(eventually([&] {
    status = ask_on(held, "status", 2);
    return status.is_object() && status["result"]["daemon"]["discovery_listing_failures"] > 0;
  })) << status.dump();
  bool listed = false;
  for (const auto& g : status["result"]["gpus"])
    for (const auto& p : g["processes"]) listed = listed || p["pid"] == offline->pid();
  EXPECT_TRUE(listed) << "a failed listing is not 'every process exited': " << status.dump();

  for (int fd : flood) ::close(fd);
  ::prlimit(daemon->pid(), RLIMIT_NOFILE, &normal, nullptr);
  EXPECT_TRUE(eventually([&] {
    auto r = rig.ask(message(client::Op::kHello));
    return r && r->ok;
  }));
  EXPECT_GE(rig.status()["daemon"]["connections"]["refused_no_descriptor"].get<int>(), refused);
  ::close(held);
}

// The socket file is created with its mode (no chmod by path afterwards, which would follow
// whatever the path named by then), and a directory others could write into is refused.
TEST(SocketAttacks, TheSocketIsBornWithItsModeInADirectoryNobodyElseCanReplace) {
  DaemonRig rig;
  const int in = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  ASSERT_GE(in, 0);
  ASSERT_GE(::inotify_add_watch(in, rig.machine().dir().c_str(), IN_CREATE | IN_ATTRIB), 0);
  auto daemon = rig.start_daemon();
  ASSERT_TRUE(rig.status().is_object());
  struct stat st {};
  ASSERT_EQ(::stat(rig.socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0666u);
  bool created = false, changed = false;
  alignas(inotify_event) char buf[65536];
  for (ssize_t n; (n = ::read(in, buf, sizeof buf)) > 0;)
    for (char* p = buf; p < buf + n;) {
      auto* e = reinterpret_cast<inotify_event*>(p);
      if (e->len && std::string(e->name) == "gpreemptd.sock") {
        created = created || (e->mask & IN_CREATE);
        changed = changed || (e->mask & IN_ATTRIB);
      }
      p += sizeof(inotify_event) + e->len;
    }
  ::close(in);
  EXPECT_TRUE(created);
  EXPECT_FALSE(changed) << "the socket's mode was changed after it was created";

  // A world-writable directory without the sticky bit: anyone could swap the socket.
  const auto open_dir = rig.file("open");
  std::filesystem::create_directory(open_dir);
  std::filesystem::permissions(open_dir, std::filesystem::perms::all);
  auto r = run({bin("gpreemptd").string(), "--socket", (open_dir / "d.sock").string(), "--metrics",
                ""},
               rig.machine().env());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("writable by its group or by everyone"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(open_dir / "d.sock"));
}

// `status` from a user who may not control the daemon: its own processes only, no rules.
TEST(SocketAttacks, StatusAsAnotherUserShowsOnlyItsOwnProcesses) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the client as another uid";
  if (!can_run_as(65534, "gpreempt")) GTEST_SKIP() << "uid 65534 cannot reach the build's programs";
  DaemonRig rig({"--shared"});
  auto daemon = rig.start_daemon();
  auto offline = rig.workload({"GPREEMPT_CLASS=offline"});
  wait_classified(rig, offline->pid(), "offline");

  auto r = ctl(rig, {"status", "--json"}, 65534);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["daemon"]["view"], "own_processes") << r.out;
  for (const auto& g : doc["gpus"])
    for (const auto& p : g["processes"])
      EXPECT_NE(p["pid"], offline->pid()) << "root's process shown to uid 65534: " << r.out;
  for (const auto& c : doc["classes"]) EXPECT_FALSE(c.contains("match")) << r.out;
  EXPECT_EQ(r.out.find("gpreempt-workload"), std::string::npos) << r.out;
  // Root sees it.
  EXPECT_FALSE(rig.process(offline->pid()).is_null());
  EXPECT_EQ(rig.status()["daemon"]["view"], "full");
}

// A process of this clone's uid: forks `victim_argv` at exactly `pid` (clone3 set_tid, which
// needs CAP_SYS_ADMIN); -1 when it cannot.
pid_t spawn_at_pid(pid_t pid, const std::vector<std::string>& argv,
                   const std::vector<std::string>& env, const std::string& program) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  for (const auto& kv : env) envs.push_back(kv);
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : envs) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  pid_t tid = pid;
  clone_args args{};
  args.exit_signal = SIGCHLD;
  args.set_tid = reinterpret_cast<uint64_t>(&tid);
  args.set_tid_size = 1;
  const long r = ::syscall(SYS_clone3, &args, sizeof args);
  if (r < 0) return -1;
  if (r == 0) {
    const int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::execve(program.c_str(), a.data(), e.data());
    ::_exit(127);
  }
  return static_cast<pid_t>(r);
}

// A connection whose process exits, and an online GPU process that takes its pid: the connection
// does not speak for the new process.
TEST(SocketAttacks, APidReusedUnderALiveConnectionInheritsNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs CAP_SYS_ADMIN to choose a pid (clone3 set_tid)";
  DaemonRig rig;
  auto daemon = daemon_with(rig, classes());
  ASSERT_TRUE(rig.status().is_object()) << daemon->stderr_text();
  auto offline = rig.workload({"GPREEMPT_CLASS=offline"});
  wait_classified(rig, offline->pid(), "offline");

  // A short-lived child connects (the daemon has accepted it once hello is answered), hands the
  // connection over and exits.
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const std::string path = rig.socket();
  const pid_t opener = ::fork();
  ASSERT_GE(opener, 0);
  if (opener == 0) {
    const int fd = connect_fd(path);
    const std::string hello = line("hello", 1);
    char buf[4096];
    if (fd < 0 || ::write(fd, hello.data(), hello.size()) < 0 || ::read(fd, buf, sizeof buf) <= 0)
      ::_exit(1);
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ::_exit(::sendmsg(pair[1], &msg, 0) == 1 ? 0 : 1);
  }
  ::close(pair[1]);
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ASSERT_EQ(::recvmsg(pair[0], &msg, 0), 1);
  ::close(pair[0]);
  int conn = -1;
  std::memcpy(&conn, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof conn);
  int status = 0;
  ASSERT_EQ(::waitpid(opener, &status, 0), opener);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  // An online GPU process (this test's uid: class online) with the opener's pid.
  const pid_t victim =
      spawn_at_pid(opener,
                   {"gpreempt-workload", "offline", "--preset", "cnn", "--duration", "60"},
                   rig.machine().env(), bin("gpreempt-workload").string());
  if (victim < 0) {
    ::close(conn);
    GTEST_SKIP() << "cannot create a process at pid " << opener << ": " << std::strerror(errno);
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{victim};
  ASSERT_EQ(victim, opener);
  wait_classified(rig, victim, "online");

  auto r = ask_on(conn, "begin", 2, ",\"request\":1");
  EXPECT_EQ(r["ok"], false) << r.dump();
  EXPECT_EQ(r["error"], "not_permitted") << r.dump();
  EXPECT_NE(r.value("message", "").find("has exited"), std::string::npos) << r.dump();
  auto hello = ask_on(conn, "hello", 3);
  EXPECT_EQ(hello["result"]["may_preempt"], false) << hello.dump();
  EXPECT_EQ(rig.process(victim)["open_requests"], 0) << rig.status().dump();
  EXPECT_TRUE(rig.none_suspended(offline->pid())) << rig.status().dump();
  ::close(conn);
}

}  // namespace
}  // namespace gpreempt::testing
