#include "daemon_rig.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

namespace gpreempt::testing {

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

DaemonRig::DaemonRig(const std::vector<std::string>& machine_options,
                     const std::vector<std::pair<std::string, std::string>>& sim_env) {
  // The simulated device reads its settings from the environment kfdsim start passes on.
  for (const auto& [k, v] : sim_env) ::setenv(k.c_str(), v.c_str(), 1);
  machine_ = std::make_unique<Machine>(machine_options);
  for (const auto& [k, v] : sim_env) ::unsetenv(k.c_str());
}

std::vector<uint32_t> DaemonRig::gpu_ids() const {
  auto r = run({bin("kfdsim").string(), "--dir", machine_->dir().string(), "status", "--json"}, {});
  std::vector<uint32_t> out;
  auto j = nlohmann::json::parse(r.out);
  for (const auto& g : j.at("gpus")) out.push_back(g.at("gpu_id").get<uint32_t>());
  return out;
}

std::unique_ptr<Child> DaemonRig::start_daemon(const std::vector<std::string>& extra) {
  // Port 0: tests run in parallel, each daemon gets its own metrics port. Level info: nobody reads
  // the daemon's stderr pipe until the end, and a full pipe would block its loop.
  std::vector<std::string> argv{bin("gpreemptd").string(),
                                "--socket",
                                socket(),
                                "--log-level",
                                "info",
                                "--metrics",
                                "127.0.0.1:0"};
  for (const auto& e : extra) argv.push_back(e);
  auto d = std::make_unique<Child>(argv, machine_->env());
  eventually([&] { return ask(message(client::Op::kStatus)).has_value(); });
  return d;
}

std::unique_ptr<Child> DaemonRig::start_daemon_from_config(const std::filesystem::path& config) {
  auto d = std::make_unique<Child>(std::vector<std::string>{bin("gpreemptd").string(), "--config",
                                                            config.string(), "--log-level", "info"},
                                   machine_->env());
  eventually([&] { return ask(message(client::Op::kStatus)).has_value(); });
  return d;
}

std::unique_ptr<Child> DaemonRig::workload(const std::vector<std::string>& env, uint32_t gpu) {
  auto e = machine_->env();
  for (const auto& x : env) e.push_back(x);
  if (gpu) e.push_back("SIMRT_GPU_ID=" + std::to_string(gpu));
  // Bare argv[0]s here and in peer(): a class glob such as the issue's `*serve*` must see the
  // process's own words, not the checkout path (CI's may contain "serve").
  return std::make_unique<Child>(
      std::vector<std::string>{"gpreempt-workload", "offline", "--preset", "cnn", "--duration", "60"},
      e, -1, bin("gpreempt-workload").string());
}

std::unique_ptr<Child> DaemonRig::peer(const std::vector<std::string>& env, uint32_t gpu,
                                       const std::vector<std::string>& args, int uid) {
  auto e = machine_->env();
  for (const auto& x : env) e.push_back(x);
  e.push_back("GPREEMPT_SOCKET=" + socket());
  if (gpu) e.push_back("SIMRT_GPU_ID=" + std::to_string(gpu));
  std::vector<std::string> argv{"gpreemptd_test_peer"};
  for (const auto& a : args) argv.push_back(a);
  auto p = std::make_unique<Child>(argv, e, uid, bin("gpreemptd_test_peer").string());
  return p;
}

std::optional<client::Reply> DaemonRig::ask(const client::Message& m) const {
  return ask_at(socket(), m);
}

std::optional<client::Reply> DaemonRig::ask_at(const std::string& socket_path,
                                               const client::Message& m) const {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  socket_path.copy(a.sun_path, sizeof a.sun_path - 1);
  // A daemon that stops answering fails the test instead of hanging it.
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  const std::string out = client::encode(m);
  (void)!::write(fd, out.data(), out.size());
  client::LineReader reader;
  std::optional<client::Reply> reply;
  char buf[65536];
  while (!reply) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    for (auto& l : reader.feed(std::string_view(buf, static_cast<std::size_t>(n))))
      reply = client::decode_reply(l);
  }
  ::close(fd);
  return reply;
}

nlohmann::json DaemonRig::status() const {
  auto r = ask(message(client::Op::kStatus));
  if (!r || !r->ok) return nlohmann::json();
  return nlohmann::json::parse(r->body.dump());
}

bool DaemonRig::all_suspended(int pid) const {
  int n = 0;
  for (const auto& q : machine_->queues())
    if (q.value("pid", 0) == pid) {
      ++n;
      if (!q.value("suspended", false)) return false;
    }
  return n > 0;
}

bool DaemonRig::none_suspended(int pid) const {
  int n = 0;
  for (const auto& q : machine_->queues())
    if (q.value("pid", 0) == pid) {
      ++n;
      if (q.value("suspended", false)) return false;
    }
  return n > 0;
}

nlohmann::json DaemonRig::process(int pid) const {
  auto s = status();
  if (s.is_null()) return nullptr;
  for (const auto& g : s["gpus"])
    for (const auto& p : g["processes"])
      if (p["pid"] == pid) return p;
  return nullptr;
}

nlohmann::json command(Child& peer, const std::string& line) {
  peer.send(line);
  auto l = peer.line();
  if (!l) return "no answer";
  auto j = nlohmann::json::parse(*l, nullptr, false);
  return j.is_discarded() ? nlohmann::json(*l) : j;
}

void wait_classified(DaemonRig& rig, int pid, const std::string& cls) {
  ASSERT_TRUE(eventually([&] {
    auto p = rig.process(pid);
    return !p.is_null() && p["class"] == cls && p["queues"].get<int>() > 0;
  })) << "pid "
      << pid << " never listed as " << cls << ": " << rig.status().dump();
}

}  // namespace gpreempt::testing
