// Which processes the daemon serves and for how long: pidfds and close-on-exec anchors tell an
// exit from an exec, either ends the device's kfd_process, and an on-demand daemon leaves with its
// last client; kfdsim run's owner ends the daemon with it.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.h"
#include "sim/daemon/server_state.h"

namespace gpreempt::sim::daemon {

void Server::watch_owner() {
  // A pidfd, not PR_SET_PDEATHSIG: the daemon detaches (--daemonize forks), so its parent is
  // never the owner. Opened before the daemon reports ready, while the owner still waits for
  // that report, so the pid cannot name a recycled process.
  owner_pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, config_.owner_pid, 0));
  if (owner_pidfd_ < 0)
    throw gpreempt::Error(errno, "cannot watch the owner process " + std::to_string(config_.owner_pid) +
                                     " (pidfd_open): " + std::strerror(errno));
  loop_.watch(owner_pidfd_, [this] {
    if (owner_gone_) return;
    log("owner process %d exited: stopping", static_cast<int>(config_.owner_pid));
    owner_gone_ = true;
    loop_.stop();
  });
}

void Server::handle_hello(int fd, const protocol::Request& req) {
  int pid = req.pid;
  auto& conn = *conns_[fd];
  // An exec'd process says hello again with the same pid; its old anchor's hang-up may still be
  // queued behind this request, so the old image is retired first.
  if (auto it = procs_.find(pid); it != procs_.end() && it->second->anchor_fd >= 0) {
    int old = it->second->anchor_fd;
    char probe;
    ssize_t n = recv(old, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) close_conn(old);
  }
  watch_process(pid);
  auto it = procs_.find(pid);
  if (it == procs_.end()) {  // the process is already gone
    reply(fd, -ESRCH);
    return;
  }
  it->second->anchor_fd = fd;
  it->second->client = true;
  it->second->retired = false;
  conn.anchor_of = pid;
  protocol::HelloReply h{getpid(), tree_.root()};
  reply(fd, 0, protocol::encode(h));
}

void Server::watch_process(int pid) {
  if (pid <= 0 || procs_.count(pid)) return;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return;
  auto p = std::make_unique<Proc>();
  p->pid = pid;
  p->pidfd = pidfd;
  p->watch = loop_.watch(pidfd, [this, pid] { on_pidfd(pid); });
  procs_[pid] = std::move(p);
}

void Server::on_pidfd(int pid) {
  process_gone(pid);
  maybe_exit();
}

void Server::retire_image(Proc& p) {
  if (p.retired) return;
  p.retired = true;
  release_mappings(p);
  ++state_gen_;
  device_->process_exited(p.pid);
}

void Server::process_gone(int pid) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return;
  std::unique_ptr<Proc> p = std::move(it->second);
  procs_.erase(it);
  loop_.unwatch(p->watch);
  ::close(p->pidfd);
  retire_image(*p);
}

void Server::maybe_exit() {
  if (config_.persistent || loop_.stopped() || !conns_.empty()) return;
  for (const auto& [pid, p] : procs_)
    if (p->client) return;
  // The shim takes this lock to start a daemon; holding it, a connection either is already in
  // the backlog (then stay) or will find no socket and start a fresh daemon.
  int lock = ::open(config_.paths.lock().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock >= 0) {
    while (flock(lock, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  on_listen();
  if (conns_.empty()) {
    unlink_socket();
    loop_.unwatch(listen_watch_);
    ::close(listen_fd_);
    listen_fd_ = -1;
    loop_.stop();
    log("last client gone, exiting");
  }
  if (lock >= 0) {
    flock(lock, LOCK_UN);
    ::close(lock);
  }
}

}  // namespace gpreempt::sim::daemon
