#include "demo/preemption_controller.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/error.h"

namespace gpreempt::demo {

namespace {

using Clock = std::chrono::steady_clock;

sched::Time now() { return std::chrono::duration_cast<sched::Time>(Clock::now().time_since_epoch()); }

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Carries out the policy's decisions on the offline target and times each call.
class CAbiActuator final : public sched::OfflineActuator {
 public:
  CAbiActuator(gpreempt_target* target, uint32_t grace, ControllerReport& report)
      : target_(target), grace_(grace), report_(report) {}
  int suspend_offline() override {
    const auto t0 = Clock::now();
    const int rc = gpreempt_suspend_process(target_, grace_);
    report_.suspend_ms.push_back(ms_since(t0));
    if (rc < 0) record("suspend", rc);
    return rc < 0 ? rc : 0;
  }
  int resume_offline() override {
    const auto t0 = Clock::now();
    const int rc = gpreempt_resume_process(target_);
    report_.resume_ms.push_back(ms_since(t0));
    if (rc < 0) record("resume", rc);
    return rc < 0 ? rc : 0;
  }

 private:
  void record(const char* what, int rc) {
    report_.errors.push_back(std::string(what) + " of pid " +
                             std::to_string(gpreempt_target_pid(target_)) + ": " +
                             gpreempt_strerror(rc) + ": " + gpreempt_last_error());
  }
  gpreempt_target* target_;
  uint32_t grace_;
  ControllerReport& report_;
};

}  // namespace

struct PreemptionController::Loop {
  gpreempt_target* target;
  ControllerOptions options;
  std::string socket_path;
  ControllerReport report;
  CAbiActuator actuator{target, options.grace, report};
  sched::PreemptionPolicy policy{options.policy, actuator};
  int listen_fd = -1;
  int client_fd = -1;
  int stop_fd = -1;
  std::thread thread;
  std::string pending;  // bytes of an unfinished line

  Loop(gpreempt_target* t, ControllerOptions o, std::string path)
      : target(t), options(o), socket_path(std::move(path)) {}

  ~Loop() {
    for (int fd : {listen_fd, client_fd, stop_fd})
      if (fd >= 0) ::close(fd);
    if (!socket_path.empty()) ::unlink(socket_path.c_str());
  }

  void handle_line(const std::string& line) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "start") {
      ++report.requests;
      policy.online_request_started(now());
      // The client holds its kernels back until this byte arrives.
      const char ack = '.';
      if (::send(client_fd, &ack, 1, MSG_NOSIGNAL) != 1)
        report.errors.push_back("cannot acknowledge the online client: " + errno_text(errno));
    } else if (kind == "end") {
      policy.online_request_finished(now());
    } else {
      report.errors.push_back("online client sent an unknown line: '" + line + "'");
    }
  }

  void run() {
    for (;;) {
      int timeout_ms = -1;
      if (auto d = policy.next_deadline()) {
        const auto left = *d - now();
        timeout_ms = left.count() <= 0
                         ? 0
                         : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
      }
      pollfd fds[2] = {{stop_fd, POLLIN, 0}, {client_fd >= 0 ? client_fd : listen_fd, POLLIN, 0}};
      const int n = ::poll(fds, 2, timeout_ms);
      if (n < 0 && errno == EINTR) continue;
      if (fds[0].revents) break;
      if (n > 0 && fds[1].revents) {
        if (client_fd < 0) {
          client_fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
          continue;
        }
        char buf[4096];
        const ssize_t got = ::recv(client_fd, buf, sizeof buf, 0);
        if (got <= 0) {
          // The online client is done: nothing may stay suspended behind it.
          ::close(client_fd);
          client_fd = -1;
          policy.release(now());
          continue;
        }
        pending.append(buf, static_cast<std::size_t>(got));
        for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
          handle_line(pending.substr(0, nl));
          pending.erase(0, nl + 1);
        }
      }
      policy.tick(now());
    }
    policy.release(now());
  }
};

PreemptionController::PreemptionController(gpreempt_target* offline, ControllerOptions options,
                                           std::string socket_path)
    : loop_(std::make_unique<Loop>(offline, options, std::move(socket_path))) {}

PreemptionController::~PreemptionController() {
  if (loop_ && loop_->thread.joinable()) stop();
}

void PreemptionController::start() {
  Loop& l = *loop_;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (l.socket_path.size() >= sizeof addr.sun_path)
    throw Error(ENAMETOOLONG, "controller socket path too long: " + l.socket_path);
  std::memcpy(addr.sun_path, l.socket_path.c_str(), l.socket_path.size() + 1);
  l.listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ::unlink(l.socket_path.c_str());
  if (l.listen_fd < 0 || ::bind(l.listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(l.listen_fd, 4) != 0)
    throw Error(errno, "controller socket " + l.socket_path + ": " + errno_text(errno));
  l.stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (l.stop_fd < 0) throw Error(errno, "eventfd: " + errno_text(errno));
  l.thread = std::thread([&l] { l.run(); });
}

ControllerReport PreemptionController::stop() {
  Loop& l = *loop_;
  if (l.thread.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(l.stop_fd, &one, sizeof one);  // cannot overflow
    l.thread.join();
  }
  l.report.policy = l.policy.stats();
  return l.report;
}

}  // namespace gpreempt::demo
