// kfdsimd's event loop: one single-threaded epoll loop per simulated machine that owns the
// KfdDevice, serves the shims' requests, completes blocked calls later, and follows the lifetime
// of every client process (pidfd for exit; the close-on-exec anchor connection for exec), which is
// what ends a kfd_process — never the closing of a /dev/kfd fd
// (docs/kfd-interface.md#session-lifetime).
#pragma once

#include <sys/types.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "sim/daemon/file_parts.h"
#include "sim/daemon/file_tree.h"
#include "sim/daemon/hardware.h"
#include "sim/daemon/host_env_linux.h"
#include "sim/daemon/machine_options.h"
#include "sim/device/device_profile.h"
#include "sim/device/kfd_device.h"
#include "sim/protocol/machine_paths.h"
#include "sim/protocol/messages.h"

namespace gpreempt::sim::daemon {

struct ServerConfig {
  protocol::MachinePaths paths;
  MachineOptions machine;
  // true (kfdsim start / run): stay up until told to stop. false (started on demand by the shim):
  // exit once the last client process is gone.
  bool persistent = false;
  // Non-zero (kfdsim run): the process this machine serves. When it ends, however it ends (a
  // SIGKILL runs none of its clean-up), the daemon stops as on SIGTERM, and owner_gone() says so.
  pid_t owner_pid = 0;
};

// Implemented by concept: server.cpp (the loop, connections, the request switch, ioctls),
// server_processes.cpp (client lifetimes), server_memory.cpp (mmap), server_files.cpp (the
// materialised tree) and server_status.cpp (the status and queues documents).
class Server {
 public:
  // Builds the profile, the hardware model and the device. Throws std::exception with a message
  // naming the bad option.
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the machine's socket. Throws if another daemon answers there or binding fails.
  void listen();
  // Serves until kShutdown, or (not persistent) until the last client is gone. Returns 0.
  int run();
  // Also stop, the same orderly way (the model's records written, the socket removed), on these
  // signals. Blocks them in the calling thread and reads them through a signalfd in the loop: for
  // the daemon's main(), not for a process that hosts a Server among other things.
  void stop_on_signals(std::initializer_list<int> signals);
  // The loop stopped because config.owner_pid ended (then the owner's clean-up is the daemon's).
  bool owner_gone() const { return owner_gone_; }

 private:
  struct Conn;
  struct Mapping;
  struct Proc;
  static constexpr int kHousekeepingSeconds = 5;
  // A request or a hardware tick that holds the loop this long is logged (what, whose, how long):
  // every other client waited as long, and the log then says who made them wait.
  static constexpr auto kSlowTurn = std::chrono::seconds(1);
  void log_if_slow(Clock::time_point start, const char* what, int pid) const;

  void on_listen();
  // Whether the connection's peer may make this request (peer_access.h); refusals are logged.
  bool permitted(Conn& conn, const protocol::Request& req);
  void on_conn(int fd);
  void on_pidfd(int pid);
  void close_conn(int fd);
  void process_gone(int pid);
  void retire_image(Proc& p);
  void watch_process(int pid);
  void maybe_exit();
  void rearm_timer();
  // Blocked WAIT_EVENTS calls with a timeout: the device keeps no clock, so the loop tells it
  // when one has passed (KfdDevice::time_out), from one timer armed at the earliest deadline.
  void arm_wait_deadline(CallToken token, uint32_t timeout_ms);
  void drop_wait_deadline(CallToken token);
  void on_wait_timer();
  // Op::kInterrupt: a signal (its handler without SA_RESTART) interrupted the thread of this
  // connection's blocked call; the device ends the call if the kernel's sleep is interruptible.
  void handle_interrupt(int fd);
  void housekeeping();
  void unlink_socket();
  void watch_owner();

  // Memory shared with a process (server_memory.cpp): its mappings unmapped and closed.
  void release_mappings(Proc& p);
  // A freed buffer's shared memory (KfdDevice::on_buffer_freed); the process keeps its own map.
  void release_mapping(int pid, uint64_t offset);
  // The memfd shared with process `p` at mmap offset `offset`, made (or grown) to hold `length`
  // bytes and mapped here too; nullptr with -errno in *err when that fails.
  Mapping* shared_memory(Proc& p, uint64_t offset, std::size_t length, int* err);
  // KfdDevice::on_kernel_memory: the device's page is the memfd the process will map.
  void* kernel_memory(int pid, uint64_t offset, std::size_t bytes);

  void handle(int fd, protocol::Request& req);
  void reply(int fd, int64_t ret, std::vector<uint8_t> payload = {}, int pass_fd = -1);
  void complete(CallToken token, long ret, std::vector<uint8_t> args);
  void handle_hello(int fd, const protocol::Request& req);
  void handle_ioctl(int fd, protocol::Request& req);
  void handle_mmap(int fd, const protocol::Request& req);
  std::string status_json() const;
  // The device's sysfs/debugfs files plus the DRM nodes' sysfs entries.
  std::map<std::string, std::string> rendered_files() const;
  // Brings the files a lookup of `guest_path` can see up to date ("" = every file, rendered
  // unconditionally).
  void refresh_files(const std::string& guest_path);
  std::string queues_json() const;

  ServerConfig config_;
  LinuxHostEnv env_;
  DeviceProfile profile_;
  std::unique_ptr<Hardware> hardware_;
  std::unique_ptr<KfdDevice> device_;
  FileTree tree_;

  EventLoop loop_;
  int listen_fd_ = -1;
  EventLoop::Id timer_ = 0;
  EventLoop::Id listen_watch_ = 0;
  EventLoop::Id housekeeping_ = 0;
  ino_t socket_inode_ = 0;
  int owner_pidfd_ = -1;
  bool owner_gone_ = false;
  std::map<int, std::unique_ptr<Conn>> conns_;
  std::map<int, std::unique_ptr<Proc>> procs_;
  std::map<CallToken, int> token_conn_;
  EventLoop::Id wait_timer_ = 0;
  // A sleeping WAIT_EVENTS call with a timeout: when it went to sleep (an interrupted wait's
  // timeout left counts from there) and when its timeout passes.
  struct WaitTimer {
    Clock::time_point since;
    Clock::time_point deadline;
  };
  std::map<CallToken, WaitTimer> wait_deadlines_;
  CallToken next_token_ = 1;
  // Bumped by everything that may change what the files show (a request reached the device, the
  // hardware ticked): a part rendered at the current generation is served as it is, since
  // rendering is the expensive part of a refresh and most refreshes follow no change at all.
  uint64_t state_gen_ = 1;
  // The generation each part (by its subtree under root/) was last rendered at.
  std::map<std::string, uint64_t> rendered_at_;
  // KFDSIM_EAGER_FILES=1: every refresh after a change renders every file of the machine (the
  // behaviour before lookups rendered only what they touch), for benchmarks comparing the two.
  bool eager_files_ = false;
  // What the loop spends its time on, for `kfdsim status --json` (bench/sim/lookup_latency.cpp
  // tells a lookup's own cost from its wait behind the hardware model's ticks with it).
  struct Cost {
    uint64_t count = 0, total_ns = 0, max_ns = 0;
    void add(Clock::duration d);
  };
  Cost refresh_cost_, tick_cost_;
  uint64_t hardware_wakes_ = 0;  // ticks the hardware's wake_fd asked for (doorbells that rang)
  void tick_hardware();
};

}  // namespace gpreempt::sim::daemon
