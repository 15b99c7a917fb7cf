// kfdsimd's loop and its clients' requests: construction, the socket, connections and peer
// checks, the request switch, ioctls and their completions. The rest of Server lives in
// server_files.cpp, server_memory.cpp, server_processes.cpp and server_status.cpp.
#include "sim/daemon/server.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string_view>

#include "common/error.h"
#include "gpreempt/kfd_abi.h"
#include "sim/daemon/host_cpu_topology.h"
#include "sim/daemon/peer_access.h"
#include "sim/daemon/server_state.h"
#include "sim/device/kernel_timer.h"
#include "sim/protocol/socket_io.h"

namespace gpreempt::sim::daemon {

using protocol::Op;

void log(const char* fmt, ...) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&t));
  std::fprintf(stderr, "kfdsimd[%d] %s ", getpid(), stamp);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

namespace {
DeviceProfile machine_profile(const MachineOptions& m) {
  DeviceProfile p = make_profile(m.profile, m.gpus);
  if (m.cpu_nodes == "host") {
    HostCpuTopology host = read_host_cpu_topology();
    p.cpu_nodes = host.numa_nodes;
    p.cpu_cores_per_node = host.cores_per_node;
    if (host.mem_per_node) p.cpu_mem_per_node = host.mem_per_node;
  } else if (m.cpu_nodes != "profile") {
    throw gpreempt::Error(EINVAL, "--cpu-nodes must be 'host' or 'profile', not '" + m.cpu_nodes + "'");
  }
  return p;
}
}  // namespace

Server::Server(ServerConfig config)
    : config_(std::move(config)),
      profile_(machine_profile(config_.machine)),
      hardware_(make_hardware(profile_, HardwareOptions{config_.machine.hardware, config_.paths.dir})),
      tree_(config_.paths.root()) {
  DeviceOptions opts;
  opts.minor_version = config_.machine.kfd_minor;
  opts.sched_policy = config_.machine.sched_policy;
  opts.config_hz = config_.machine.kernel_hz;
  device_ = std::make_unique<KfdDevice>(profile_, opts, env_, hardware_->hws());
  device_->on_complete = [this](CallToken t, long ret, std::vector<uint8_t> args) {
    complete(t, ret, std::move(args));
  };
  device_->on_buffer_freed = [this](int pid, uint64_t offset) { release_mapping(pid, offset); };
  device_->on_kernel_memory = [this](int pid, uint64_t offset, std::size_t bytes) {
    return kernel_memory(pid, offset, bytes);
  };
  hardware_->attach(*device_);
  const char* eager = std::getenv("KFDSIM_EAGER_FILES");
  eager_files_ = eager && std::string_view(eager) == "1";
  std::vector<uint32_t> render_minors;
  for (const auto& g : profile_.gpus) render_minors.push_back(g.drm_render_minor);
  tree_.init(render_minors);
  for (uint32_t minor : render_minors) env_.add_render_node(minor, tree_.render_node_path(minor));
  refresh_files("");
  timer_ = loop_.add_timer([this] { tick_hardware(); });
  if (const int fd = hardware_->wake_fd(); fd >= 0)
    loop_.watch(fd, [this] {
      hardware_->woken();
      ++hardware_wakes_;
      tick_hardware();
    });
  wait_timer_ = loop_.add_timer([this] { on_wait_timer(); });
  housekeeping_ = loop_.add_timer([this] { housekeeping(); });
  loop_.arm_every(housekeeping_, std::chrono::seconds(kHousekeepingSeconds));
  loop_.set_after_batch([this] { rearm_timer(); });
  if (config_.owner_pid > 0) watch_owner();
}

Server::~Server() {
  for (auto& [fd, c] : conns_) ::close(fd);
  for (auto& [pid, p] : procs_) {
    release_mappings(*p);
    ::close(p->pidfd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (owner_pidfd_ >= 0) ::close(owner_pidfd_);
}

void Server::listen() {
  const std::string& path = config_.paths.socket;
  int probe = protocol::connect_unix(path);
  if (probe >= 0) {
    ::close(probe);
    throw gpreempt::Error(EADDRINUSE, "a kfdsimd already serves " + path);
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw gpreempt::Error(ENAMETOOLONG, "socket path too long (max " + std::to_string(sizeof addr.sun_path - 1) +
                             " bytes): " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());  // a stale socket of a daemon that died
  listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0)
    throw std::runtime_error("cannot listen on " + path + ": " + std::strerror(errno));
  listen_watch_ = loop_.watch(listen_fd_, [this] { on_listen(); });
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) socket_inode_ = st.st_ino;
  if (config_.machine.shared) share_machine(config_.paths);
  log("serving %s: profile %s, %zu GPU(s), KFD 1.%u, sched_policy %d, %s, %s", path.c_str(),
      profile_.name.c_str(), profile_.gpus.size(), config_.machine.kfd_minor,
      config_.machine.sched_policy, config_.persistent ? "persistent" : "exits after last client",
      config_.machine.shared ? "shared with every uid" : "private to its owner");
}

int Server::run() {
  loop_.run();
  hardware_->stopping();
  unlink_socket();
  log("stopped");
  return 0;
}

void Server::stop_on_signals(std::initializer_list<int> signals) {
  loop_.on_signals(signals, [this](int signo) {
    log("signal %d: stopping", signo);
    loop_.stop();
  });
}

void Server::unlink_socket() {
  // Only our own socket: after a takeover the path belongs to another daemon.
  struct stat st {};
  if (::stat(config_.paths.socket.c_str(), &st) == 0 && st.st_ino == socket_inode_)
    ::unlink(config_.paths.socket.c_str());
}

void Server::housekeeping() {
  // A daemon whose socket path was removed or taken over can never be reached again.
  struct stat st {};
  if (::stat(config_.paths.socket.c_str(), &st) != 0 || st.st_ino != socket_inode_) {
    log("%s no longer leads here, exiting", config_.paths.socket.c_str());
    loop_.stop();
    return;
  }
  // An on-demand daemon whose starter never connected (it died first) has no client to wait for.
  maybe_exit();
}

void Server::rearm_timer() { loop_.arm_at(timer_, hardware_->next_tick()); }

void Server::on_listen() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      // Without the peer's credentials nothing it asks can be checked.
      log("dropping a connection whose peer is unknown: %s", std::strerror(errno));
      ::close(fd);
      continue;
    }
    c->peer_pid = cred.pid;
    c->peer_uid = cred.uid;
    c->watch = loop_.watch(fd, [this, fd] { on_conn(fd); });
    conns_[fd] = std::move(c);
  }
}

void Server::on_conn(int fd) {
  std::vector<uint8_t> msg;
  if (protocol::recv_message(fd, msg) < 0) {
    close_conn(fd);
    return;
  }
  protocol::DecodeError err;
  auto req = protocol::decode_request(msg, &err);
  if (!req) {
    log("dropping connection of pid %d: %s", conns_[fd]->peer_pid, err.what.c_str());
    close_conn(fd);
    return;
  }
  const auto start = Clock::now();
  const int pid = req->pid;
  const auto op = static_cast<int>(req->op);
  if (!permitted(*conns_[fd], *req)) {
    // An ioctl's caller expects its argument bytes back whatever the result.
    reply(fd, -EPERM, req->op == Op::kIoctl ? std::move(req->payload) : std::vector<uint8_t>{});
    return;
  }
  handle(fd, *req);
  char what[48];
  std::snprintf(what, sizeof what, "request (op %d)", op);
  log_if_slow(start, what, pid);
  tick_hardware();
}

void Server::log_if_slow(Clock::time_point start, const char* what, int pid) const {
  const auto took = Clock::now() - start;
  if (took < kSlowTurn) return;
  log("slow turn: %s of pid %d held the loop for %.3f s (every other client waited as long)", what, pid,
      std::chrono::duration<double>(took).count());
}

void Server::Cost::add(Clock::duration d) {
  const auto ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  ++count;
  total_ns += ns;
  max_ns = std::max(max_ns, ns);
}

void Server::tick_hardware() {
  const auto start = Clock::now();
  hardware_->tick(start);
  // The GPU wrote event-page slots and raised interrupts: the event waiters wake now.
  for (int pid : hardware_->take_event_interrupts()) device_->event_interrupt(pid);
  tick_cost_.add(Clock::now() - start);
  log_if_slow(start, "the GPU model's tick", getpid());
  if (hardware_->ticks_change_state()) ++state_gen_;
}

void Server::reply(int fd, int64_t ret, std::vector<uint8_t> payload, int pass_fd) {
  protocol::Reply r{ret, std::move(payload)};
  auto msg = protocol::encode(r);
  // Never waits: a client that does not take its answers (it pipelines requests and reads none)
  // would otherwise fill the send buffer and stop the loop, every other client's calls with it.
  // One call at a time per connection leaves at most one answer unread, which always fits.
  const int err = protocol::send_message(fd, msg, pass_fd, /*nonblocking=*/true);
  if (err == 0 || err == -EPIPE || err == -ECONNRESET) return;  // a peer that is gone shows up as a hang-up
  // An answer that cannot be delivered (larger than the socket's send buffer, or the buffer full
  // of answers the client has not read) must not leave the caller waiting for ever: end its
  // connection, which it sees as the daemon hanging up.
  log("cannot answer pid %d (%zu bytes): %s", conns_.count(fd) ? conns_[fd]->peer_pid : 0, msg.size(),
      std::strerror(-err));
  ::shutdown(fd, SHUT_RDWR);
}

bool Server::permitted(Conn& conn, const protocol::Request& req) {
  switch (req.op) {
    case Op::kHelloProcess:
    case Op::kOpenKfd:
    case Op::kIoctl:
    case Op::kMmap: {
      if (std::find(conn.acts_as.begin(), conn.acts_as.end(), req.pid) != conn.acts_as.end())
        return true;
      const std::string why = may_act_as(conn.peer_uid, req.pid);
      if (why.empty()) {
        conn.acts_as.push_back(req.pid);
        return true;
      }
      log("refused op %d of pid %d (uid %u) as pid %d: %s", static_cast<int>(req.op), conn.peer_pid,
          static_cast<unsigned>(conn.peer_uid), req.pid, why.c_str());
      return false;
    }
    case Op::kQueues:
    case Op::kGpuStats:
    case Op::kShutdown:
      if (is_machine_admin(conn.peer_uid)) return true;
      log("refused op %d of pid %d: uid %u is neither the machine's owner (uid %u) nor root",
          static_cast<int>(req.op), conn.peer_pid, static_cast<unsigned>(conn.peer_uid),
          static_cast<unsigned>(::geteuid()));
      return false;
    case Op::kRefreshFiles:
    case Op::kStatus:
    case Op::kDrmDevice:
    case Op::kInterrupt:  // acts on this connection's own blocked call only
      return true;
  }
  return false;
}

void Server::handle(int fd, protocol::Request& req) {
  switch (req.op) {
    case Op::kHelloProcess: handle_hello(fd, req); return;
    case Op::kOpenKfd: {
      watch_process(req.pid);
      ++state_gen_;
      reply(fd, device_->open(Caller{req.pid, req.tid}));
      return;
    }
    case Op::kIoctl: handle_ioctl(fd, req); return;
    case Op::kMmap: handle_mmap(fd, req); return;
    case Op::kRefreshFiles:
      try {
        const auto start = Clock::now();
        refresh_files(std::string(req.payload.begin(), req.payload.end()));
        refresh_cost_.add(Clock::now() - start);
        reply(fd, 0);
      } catch (const std::exception& e) {
        rendered_at_.clear();
        log("refreshing files failed: %s", e.what());
        reply(fd, -EIO);
      }
      return;
    case Op::kStatus: {
      std::string s = status_json();
      reply(fd, 0, std::vector<uint8_t>(s.begin(), s.end()));
      return;
    }
    case Op::kQueues: {
      std::string s = queues_json();
      reply(fd, 0, std::vector<uint8_t>(s.begin(), s.end()));
      return;
    }
    case Op::kGpuStats: {
      auto s = hardware_->stats_json(req.arg, protocol::kGpuStatsPage);
      if (!s) {
        reply(fd, -ENODEV);
      } else {
        reply(fd, 0, std::vector<uint8_t>(s->begin(), s->end()));
      }
      return;
    }
    case Op::kDrmDevice: {
      for (const auto& g : profile_.gpus) {
        if (g.drm_render_minor != req.arg) continue;
        protocol::DrmDeviceInfo d;
        d.render_minor = g.drm_render_minor;
        d.gpu_id = g.gpu_id;
        d.device_id = profile_.device_id;
        d.revision_id = profile_.revision_id;
        d.gfx_target_version = profile_.gfx_target_version;
        d.shader_arrays_per_engine = profile_.simd_arrays_per_engine;
        d.num_shader_engines =
            profile_.simd_arrays_per_engine ? profile_.array_count / profile_.simd_arrays_per_engine : 0;
        d.cu_count = profile_.cu_count;
        d.max_engine_clock_mhz = profile_.max_engine_clk_fcompute;
        d.wave_front_size = profile_.wave_front_size;
        d.num_xcc = profile_.num_xcc;
        d.location_id = g.location_id;
        reply(fd, 0, protocol::encode(d));
        return;
      }
      reply(fd, -ENODEV);
      return;
    }
    case Op::kInterrupt: handle_interrupt(fd); return;
    case Op::kShutdown:
      log("shutdown requested by pid %d", req.pid);
      reply(fd, 0);
      loop_.stop();
      return;
  }
}

void Server::handle_ioctl(int fd, protocol::Request& req) {
  auto& conn = *conns_[fd];
  ++state_gen_;
  CallToken token = next_token_++;
  token_conn_[token] = fd;
  conn.pending = token;
  Caller caller{req.pid, req.tid};
  IoctlResult r = device_->ioctl(caller, req.arg, std::span<uint8_t>(req.payload), token);
  // A debug session can name a process that never talked to us (ENABLE creates its kfd_process):
  // its exit must still reach the device.
  if (kfd::ioc_nr(req.arg) == kfd::NR_DBG_TRAP && req.payload.size() >= sizeof(uint32_t)) {
    uint32_t target;
    std::memcpy(&target, req.payload.data(), sizeof target);
    // Usually the target names its main thread (pid == tgid) and is watched already: no /proc
    // read on the suspend/resume path then.
    if (!procs_.count(static_cast<int>(target)))
      if (auto tgid = env_.tgid_of(static_cast<int>(target))) watch_process(*tgid);
  }
  if (r.blocked) {  // complete() answers, now or later
    if (r.timeout_ms && token_conn_.count(token)) arm_wait_deadline(token, r.timeout_ms);
    return;
  }
  token_conn_.erase(token);
  conn.pending.reset();
  reply(fd, r.ret, std::move(req.payload));
}

void Server::arm_wait_deadline(CallToken token, uint32_t timeout_ms) {
  const auto now = Clock::now();
  const auto since_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
  const auto fires_ns = wait_timeout_fires_at_ns(timeout_ms, config_.machine.kernel_hz,
                                                 static_cast<uint64_t>(since_ns.count()));
  wait_deadlines_[token] = {now, Clock::time_point(std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::nanoseconds(fires_ns)))};
  on_wait_timer();  // re-arms at the earliest deadline
}

void Server::drop_wait_deadline(CallToken token) {
  // The timer stays armed for the deadline that went: a fire with nothing due only re-arms.
  wait_deadlines_.erase(token);
}

void Server::on_wait_timer() {
  const auto now = Clock::now();
  std::vector<CallToken> due;
  std::optional<Clock::time_point> next;
  for (const auto& [token, timer] : wait_deadlines_) {
    if (timer.deadline <= now)
      due.push_back(token);
    else if (!next || timer.deadline < *next)
      next = timer.deadline;
  }
  for (CallToken t : due) {
    wait_deadlines_.erase(t);
    device_->time_out(t);  // answers through complete()
  }
  loop_.arm_at(wait_timer_, next);
}

void Server::handle_interrupt(int fd) {
  auto& conn = *conns_[fd];
  if (!conn.pending) return;  // the answer crossed the interrupt
  const CallToken token = *conn.pending;
  const auto now = Clock::now();
  auto since = now;  // a call without a timeout: no time is written back
  if (auto d = wait_deadlines_.find(token); d != wait_deadlines_.end()) since = d->second.since;
  auto ns = [](Clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  ++state_gen_;
  // Answers through complete() when the call's sleep was interruptible; otherwise its answer
  // comes when it finishes.
  device_->interrupt(token, ns(since), ns(now));
}

void Server::complete(CallToken token, long ret, std::vector<uint8_t> args) {
  ++state_gen_;
  drop_wait_deadline(token);
  auto it = token_conn_.find(token);
  if (it == token_conn_.end()) return;
  int fd = it->second;
  token_conn_.erase(it);
  if (auto c = conns_.find(fd); c != conns_.end()) {
    c->second->pending.reset();
    reply(fd, ret, std::move(args));
  }
}

void Server::close_conn(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  std::unique_ptr<Conn> c = std::move(it->second);
  conns_.erase(it);
  loop_.unwatch(c->watch);
  ::close(fd);
  if (c->pending) {
    // The thread blocked in this call died or was interrupted away: the kernel's -ERESTARTSYS.
    token_conn_.erase(*c->pending);
    drop_wait_deadline(*c->pending);
    ++state_gen_;
    device_->cancel(*c->pending);
  }
  if (c->anchor_of) {
    auto p = procs_.find(c->anchor_of);
    if (p != procs_.end() && p->second->anchor_fd == fd) {
      p->second->anchor_fd = -1;
      // The close-on-exec anchor hung up: the process exited, or it exec'd (then it is still
      // alive and stays a client, but its kfd_process ends with the old address space).
      pollfd pf{p->second->pidfd, POLLIN, 0};
      if (poll(&pf, 1, 0) == 1)
        process_gone(c->anchor_of);
      else
        retire_image(*p->second);
    }
  }
  maybe_exit();
}

}  // namespace gpreempt::sim::daemon
