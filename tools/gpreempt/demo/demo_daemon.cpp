#include "demo/demo_daemon.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/connection.h"
#include "common/error.h"

namespace gpreempt::demo {

namespace {

// A TOML basic string: the paths and globs here have no control characters.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::vector<std::string> daemon_argv(const DaemonSetup& s, const std::string& config) {
  // warn: the daemon's info lines (one per process found) would interleave with the demo's
  // progress; its warnings and errors still reach the user.
  return {s.program, "--config", config, "--log-level", "warn"};
}

bool exited(pid_t pid) {
  siginfo_t info{};
  // WNOWAIT: the child stays reapable, so its exit code comes from ChildProcess::wait.
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

std::string write_config(const DaemonSetup& s, const std::string& socket) {
  const std::string path = s.work_dir + "/gpreemptd-" + s.name + ".toml";
  std::ofstream f(path);
  f << daemon_config(s, socket);
  if (!f.flush()) throw Error(EIO, "cannot write the demo's gpreemptd config " + path);
  return path;
}

}  // namespace

std::string daemon_config(const DaemonSetup& s, const std::string& socket_path) {
  std::ostringstream t;
  t << "# gpreempt demo, scenario " << s.name << "\n"
    << "[daemon]\nsocket = " << quoted(socket_path) << "\nmetrics = \"\"\n";
  if (s.resume_after_idle_ms || s.max_suspension_ms || s.grace_default_us) {
    t << "\n[policy]\n";
    if (s.resume_after_idle_ms)
      t << "resume_after_idle_ms = " << number(*s.resume_after_idle_ms) << "\n";
    if (s.max_suspension_ms) t << "max_suspension_ms = " << number(*s.max_suspension_ms) << "\n";
    if (s.grace_default_us) t << "grace_default_us = " << number(*s.grace_default_us) << "\n";
  }
  // The online class preempts the offline one, so it names what a process cannot set itself
  // (docs/security.md): the demo's workloads run as the user running the demo.
  t << "\n[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = " << ::getuid()
    << ", cmdline = " << quoted(s.online_cmdline) << " }\ntrigger = " << quoted(s.trigger) << "\n"
    << "\n[[class]]\nname = \"offline\"\npriority = 0\n"
    << "match = { env = \"GPREEMPT_CLASS=offline\" }\n";
  return t.str();
}

DemoDaemon::DemoDaemon(const DaemonSetup& setup, std::chrono::seconds timeout)
    : config_path_(write_config(setup, setup.work_dir + "/gpreemptd-" + setup.name + ".sock")),
      socket_(setup.work_dir + "/gpreemptd-" + setup.name + ".sock"),
      child_(daemon_argv(setup, config_path_)) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + timeout;
  std::string last;
  for (;;) {
    try {
      auto c = client::Connection::connect(socket_, milliseconds(1000));
      c.hello();
      return;
    } catch (const Error& e) {
      last = e.what();
    }
    if (exited(child_.pid())) {
      const int rc = child_.wait();
      stopped_ = true;
      exit_code_ = rc;
      throw Error(EIO, "'" + child_.command_line() + "' ended (exit code " + std::to_string(rc) +
                           ") before its socket answered; its config: " + config_path_);
    }
    if (steady_clock::now() > deadline)
      throw Error(ETIMEDOUT, "'" + child_.command_line() + "' did not answer on " + socket_ +
                                 " within " + std::to_string(timeout.count()) + " s: " + last);
    std::this_thread::sleep_for(milliseconds(20));
  }
}

DemoDaemon::~DemoDaemon() {
  // An exception left the scenario: end the daemon properly (it resumes what it suspended);
  // ChildProcess's destructor would SIGKILL it, which the kernel also survives, but noisily.
  if (!stopped_) {
    try {
      stop();
    } catch (...) {
    }
  }
}

nlohmann::ordered_json DemoDaemon::status() const {
  auto c = client::Connection::connect(socket_);
  return c.status();
}

void DemoDaemon::wait_classified(int pid, const std::string& class_name,
                                 std::chrono::seconds timeout) const {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {
    const auto s = status();
    for (const auto& g : s["gpus"])
      for (const auto& p : g["processes"])
        if (p["pid"] == pid && p["class"] == class_name) return;
    if (steady_clock::now() > deadline)
      throw Error(ETIMEDOUT, "gpreemptd did not put pid " + std::to_string(pid) + " in class " +
                                 class_name + " within " + std::to_string(timeout.count()) +
                                 " s (config " + config_path_ + ")");
    std::this_thread::sleep_for(milliseconds(20));
  }
}

int DemoDaemon::stop() {
  if (stopped_) return exit_code_;
  stopped_ = true;
  if (::kill(child_.pid(), SIGTERM) != 0 && errno != ESRCH)
    throw Error(errno, "cannot stop gpreemptd (pid " + std::to_string(child_.pid()) + ")");
  exit_code_ = child_.wait();
  return exit_code_;
}

}  // namespace gpreempt::demo
