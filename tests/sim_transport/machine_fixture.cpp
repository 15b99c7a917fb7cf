#include "machine_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sim/protocol/gpu_stats_query.h"
#include "sim/protocol/messages.h"
#include "sim/protocol/query.h"
#include "fixtures.h"

extern char** environ;

namespace gpreempt::testing {

std::filesystem::path build_path(const std::string& relative) {
  // Test programs live in <build>/bin, so the build tree is also found from our own executable
  // when GPREEMPT_BINARY_DIR is not in the environment.
  std::filesystem::path root = binary_dir();
  if (root.empty()) root = std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path();
  return root / relative;
}

Child::Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!env.count(kv.substr(0, kv.find('=')))) envs.push_back(kv);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : envs) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  in_ = in[1];
  out_ = out[0];
  if (rc != 0) throw std::runtime_error("cannot spawn " + argv[0] + ": " + std::strerror(rc));
}

Child::~Child() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    wait_status();
  }
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
}

void Child::send(const std::string& line) {
  std::string l = line + "\n";
  if (write(in_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
    throw std::runtime_error("cannot write '" + line + "' to child " + std::to_string(pid_));
}

std::optional<std::string> Child::line(std::chrono::milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string l = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return l;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string Child::call(const std::string& command) {
  send(command);
  auto l = line();
  if (!l) throw std::runtime_error("no answer from pid " + std::to_string(pid_) + " to '" + command + "'");
  return *l;
}

std::string Child::rest() {
  std::string r = buffer_;
  buffer_.clear();
  char buf[4096];
  for (;;) {
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) break;
    r.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

int Child::finish() {
  if (in_ >= 0) {
    close(in_);
    in_ = -1;
  }
  return wait_status();
}

void Child::kill(int sig) { ::kill(pid_, sig); }

int Child::wait_status() {
  if (!reaped_) {
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  return status_;
}

Machine::Machine(std::map<std::string, std::string> extra_env) : extra_(std::move(extra_env)) {
  // Short and under /tmp: the socket path must fit sockaddr_un.
  char tmpl[] = "/tmp/kfdsim-test-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
}

std::vector<int> daemons_in(const std::filesystem::path& dir) {
  std::vector<int> pids;
  const std::string want = "--dir=" + dir.string();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string arg;
    while (std::getline(in, arg, '\0'))
      if (arg == want || arg.rfind(want + "/", 0) == 0) {
        pids.push_back(std::stoi(name));
        break;
      }
  }
  return pids;
}

Machine::~Machine() {
  // Make sure no daemon outlives the test, whatever state the test left, and none is still
  // writing into the directory when it is removed: a daemon whose last client has gone no longer
  // answers, but still writes gpu-stats.json on its way out.
  for (int pid : daemons_in(dir_)) {
    ::kill(pid, SIGKILL);
    wait_daemon_gone(pid);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::map<std::string, std::string> Machine::env() const {
  std::map<std::string, std::string> e = extra_;
#ifdef GPREEMPT_SANITIZER_PRELOAD  // an instrumented shim needs the sanitizer runtime loaded first
  e["LD_PRELOAD"] = GPREEMPT_SANITIZER_PRELOAD ":" + build_path("lib/libkfdshim.so").string();
#else
  e["LD_PRELOAD"] = build_path("lib/libkfdshim.so").string();
#endif
  e["KFDSIM_DIR"] = dir_.string();
  e["KFDSIM_DAEMON"] = build_path("bin/kfdsimd").string();
  return e;
}

std::unique_ptr<Child> Machine::probe() {
  return std::make_unique<Child>(std::vector<std::string>{build_path("bin/kfd_probe").string()}, env());
}

std::unique_ptr<Child> Machine::spawn(const std::vector<std::string>& argv) {
  return std::make_unique<Child>(argv, env());
}

namespace {
std::optional<nlohmann::json> ask(const std::filesystem::path& dir, sim::protocol::Op op) {
  auto r = sim::protocol::query((dir / "kfdsim.sock").string(), op);
  if (r.error) return std::nullopt;
  return nlohmann::json::parse(r.payload);
}
}  // namespace

std::optional<nlohmann::json> Machine::status() const { return ask(dir_, sim::protocol::Op::kStatus); }
std::optional<nlohmann::json> Machine::queues() const { return ask(dir_, sim::protocol::Op::kQueues); }
std::optional<nlohmann::json> Machine::gpu_stats() const {
  auto r = sim::protocol::fetch_gpu_stats((dir_ / "kfdsim.sock").string());
  if (r.error) return std::nullopt;
  return std::move(r.stats);
}

bool Machine::wait_queues(const std::function<bool(const nlohmann::json&)>& pred) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto q = queues(); q && pred(*q)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool Machine::wait_daemon_gone(int daemon_pid) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    // A zombie is gone for our purposes (its parent, the one-shot launcher, has exited).
    if (process_ended(daemon_pid) && !status()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace gpreempt::testing
