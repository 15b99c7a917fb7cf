#include "sim_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "support/fixtures.h"

namespace gpreempt::testing {

namespace fs = std::filesystem;

fs::path bin(const std::string& name) { return binary_dir() / "bin" / name; }

Child::Child(const std::vector<std::string>& argv, const std::vector<std::string>& env, int uid,
             const std::string& program) {
  int pin[2], pout[2], perr[2];
  if (::pipe2(pin, O_CLOEXEC) || ::pipe2(pout, O_CLOEXEC) || ::pipe2(perr, O_CLOEXEC))
    throw std::runtime_error("pipe2 failed");
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  for (const auto& kv : env) envs.push_back(kv);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(pin[0], 0);
    ::dup2(pout[1], 1);
    ::dup2(perr[1], 2);
    ::setpgid(0, 0);
    if (uid >= 0 && (::setgid(static_cast<gid_t>(uid)) != 0 || ::setuid(static_cast<uid_t>(uid)) != 0))
      ::_exit(126);
    std::vector<char*> a, e;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (const auto& s : envs) e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    ::execve(program.empty() ? a[0] : program.c_str(), a.data(), e.data());
    ::_exit(127);
  }
  ::close(pin[0]);
  ::close(pout[1]);
  ::close(perr[1]);
  in_ = pin[1];
  out_ = pout[0];
  err_ = perr[0];
  ::fcntl(err_, F_SETFL, O_NONBLOCK);
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  for (int fd : {in_, out_, err_})
    if (fd >= 0) ::close(fd);
}

void Child::send(const std::string& l) {
  std::string s = l + "\n";
  if (::write(in_, s.data(), s.size()) != static_cast<ssize_t>(s.size()))
    throw std::runtime_error("write to child failed");
}

std::optional<std::string> Child::line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto nl = buf_.find('\n');
    if (nl != std::string::npos) {
      std::string l = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return l;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char b[4096];
    ssize_t n = ::read(out_, b, sizeof b);
    if (n <= 0) return std::nullopt;
    buf_.append(b, static_cast<std::size_t>(n));
  }
}

std::string Child::rest(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char b[4096];
    ssize_t n = ::read(out_, b, sizeof b);
    if (n <= 0) break;
    buf_.append(b, static_cast<std::size_t>(n));
  }
  std::string out;
  out.swap(buf_);
  return out;
}

int Child::wait(std::chrono::milliseconds timeout) {
  if (reaped_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

void Child::kill(int sig) { ::kill(pid_, sig); }

std::string Child::stderr_text() {
  std::string s;
  char b[4096];
  ssize_t n;
  while ((n = ::read(err_, b, sizeof b)) > 0) s.append(b, static_cast<std::size_t>(n));
  return s;
}

bool can_run_as(int uid, const std::string& program) {
  const std::string exe = bin(program).string();
  const std::string shim = (binary_dir() / "lib" / "libkfdshim.so").string();
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (::setgid(static_cast<gid_t>(uid)) != 0 || ::setuid(static_cast<uid_t>(uid)) != 0) ::_exit(1);
    ::_exit(::access(exe.c_str(), X_OK) == 0 && ::access(shim.c_str(), R_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env, int uid) {
  Child c(argv, env, uid);
  RunResult r;
  r.out = c.rest();
  r.code = c.wait();
  r.err = c.stderr_text();
  return r;
}

Machine::Machine(const std::vector<std::string>& options) {
  char tmpl[] = "/tmp/gpcore-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  std::vector<std::string> argv{bin("kfdsim").string(), "--dir", dir_.string(), "start"};
  for (const auto& o : options) argv.push_back(o);
  // A test that crashes (or is killed by ctest's timeout) runs no destructor: the machine follows
  // the test process and stops with it all the same.
  argv.insert(argv.end(), {"--owner-pid", std::to_string(::getpid())});
  auto r = run(argv, {});
  if (r.code != 0) throw std::runtime_error("kfdsim start failed: " + r.err);
}

Machine::~Machine() {
  run({bin("kfdsim").string(), "--dir", dir_.string(), "stop"}, {});
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::vector<std::string> Machine::env() const {
#ifdef GPREEMPT_SANITIZER_PRELOAD  // an instrumented shim needs the sanitizer runtime loaded first
  const std::string runtime = GPREEMPT_SANITIZER_PRELOAD ":";
#else
  const std::string runtime;
#endif
  return {"LD_PRELOAD=" + runtime + (binary_dir() / "lib" / "libkfdshim.so").string(),
          "KFDSIM_DIR=" + dir_.string()};
}

nlohmann::json Machine::queues() const {
  auto r = run({bin("kfdsim").string(), "--dir", dir_.string(), "queues", "--json"}, {});
  if (r.code != 0) throw std::runtime_error("kfdsim queues failed: " + r.err);
  return nlohmann::json::parse(r.out).at("queues");
}

std::optional<bool> Machine::suspended(int pid, uint32_t queue_id) const {
  for (const auto& q : queues())
    if (q.value("pid", 0) == pid && q.value("queue_id", 0u) == queue_id)
      return q.value("suspended", false);
  return std::nullopt;
}

bool Machine::wait_suspended(int pid, uint32_t queue_id, bool want) const {
  for (int i = 0; i < 400; ++i) {
    if (suspended(pid, queue_id) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

}  // namespace gpreempt::testing
