// gpreemptd: the process that owns every preemption decision on a machine. It is wiring around
// lib/sched's Runtime (the scheduler, what is suspended, orphan recovery): one event loop on one
// thread (lib/common EventLoop) feeds the Runtime what it observes — GPU processes
// (ProcessTracker, whose reading and classifying runs on a worker thread), hints and control
// commands (SocketServer), actuation answers (Actuator, the Runtime's actuator port), the
// Runtime's timer, signals — and serves the status and the metrics.
//
// Signals: SIGTERM/SIGINT end the daemon after everything it suspended is resumed; SIGHUP re-reads
// the config file (an invalid one is rejected with file:line and the running one kept). SIGKILL
// needs nothing from us: the kernel resumes the targets of a debugger that exits.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "actuator.h"
#include "client/protocol.h"
#include "common/event_loop.h"
#include "container_resolver.h"
#include "discovery/process_discovery.h"
#include "gpu_capability.h"
#include "gpu_record.h"
#include "hint_requests.h"
#include "metrics/metrics_server.h"
#include "process_tracker.h"
#include "sched/classifier.h"
#include "daemon_config.h"
#include "sched/runtime.h"
#include "socket_server.h"
#include "transparent/transparent_trigger.h"

namespace gpreemptd {

struct DaemonOptions {
  std::string config_path;  // empty: the built-in classes (GPREEMPT_CLASS=online / =offline)
  std::optional<std::string> socket_path;      // overrides the config's [daemon] socket
  std::optional<std::string> metrics_address;  // overrides the config's [daemon] metrics ("" = off)
  gpreempt::discovery::SystemRoots roots;
  std::string topology_root = "/sys/class/kfd/kfd/topology";
  // How often /sys/class/kfd/kfd/proc is listed: new GPU processes are classified within this.
  std::chrono::nanoseconds discovery_interval = std::chrono::milliseconds(20);
  // Called once the socket listens and the first scan is done (sd_notify READY=1).
  std::function<void()> on_ready;
};

class Daemon {
 public:
  Daemon(DaemonOptions options, DaemonConfig config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs until SIGTERM/SIGINT and the resumes they cause; returns the exit code. Throws
  // std::runtime_error when it cannot start (socket in use, ...).
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  // The core's watchdog: a backstop behind the scheduler's hard bound, never the policy.
  static std::chrono::milliseconds watchdog_bound(const gpreempt::sched::ArbiterConfig& c);
  gpreempt::sched::Time now() const;
  void dispatch(const gpreempt::sched::Event& e,
                std::optional<Clock::time_point> hint_received = {});
  // A request the Runtime saw finish (any source): the per-GPU figures of status and metrics.
  void request_done(const gpreempt::sched::RequestDone& d);
  // The Runtime's observer: each action once it is handed to the actuator (logs, hint timings).
  void observe(const gpreempt::sched::Action& a);
  void on_tracker_event(gpreempt::sched::Event e);
  // Watch (or stop watching) the queue pointers of `p` as its class's triggers say.
  void sync_transparent(const gpreempt::sched::ProcessRecord& p);
  // The Runtime's process_left port: `key` exited or lost its pid to a newcomer; what the daemon
  // keeps of it (attachments, watches, hint bookkeeping) goes with it.
  void process_left(const gpreempt::sched::ProcessKey& key);
  // The class `key` is in now ("" when none or unknown), for the per-class figures.
  std::string class_of(const gpreempt::sched::ProcessKey& key) const;
  void publish_metrics();
  void on_actuation(ActuationReport r);
  void on_notice(const gpreempt::preempt::Notice& n);
  // Why `key`, suspended on `gpu`, is no longer the scheduler's there (for the log).
  std::string orphan_reason(gpreempt::sched::GpuId gpu, const gpreempt::sched::ProcessKey& key);
  void begin_shutdown(int signo);
  void check_shutdown_done();
  // Re-read the config file. Returns the errors (file:line: message); empty when applied.
  std::vector<std::string> reload();
  // The [daemon] part of a reloaded config: rebind the socket and the metrics listener, change the
  // transparent poll interval and the container roots. A setting that cannot be applied (the new
  // address does not bind) keeps its running value in `next` and is logged; returns those
  // messages.
  std::vector<std::string> apply_daemon_settings(DaemonSettings& next);
  // The loop thread (the caller) and the core's control thread: SCHED_FIFO at `priority`, or the
  // normal policy (0). Throws gpreempt::Error.
  void set_realtime_priority(int priority);
  // Log the [[policy.gpu]] tables that name no GPU of this machine (the file may serve others).
  void check_policy_gpus() const;
  // Serve metrics on `address` ("" = none); throws when it does not bind.
  void start_metrics(const std::string& address);
  void apply_classes();

  gpreempt::client::Reply handle(uint64_t connection, const Peer& peer,
                                 const gpreempt::client::Message& m, Clock::time_point received);
  // kToken: an LLM request's tokens so far, for its TTFT/TPOT (daemon_requests.cpp).
  gpreempt::client::Reply token_report(uint64_t connection, const gpreempt::client::Message& m,
                                       Clock::time_point received);
  // kSuspend / kResume: the operator trigger (the peer's permission is already checked).
  gpreempt::client::Reply operator_command(const gpreempt::client::Message& m);
  void connection_closed(uint64_t connection, const Peer& peer);
  // The tracked process that opened `connection` (nullptr: none, and `why` says so): the process
  // identified when the connection was accepted, never whichever holds its pid now. Reads no /proc
  // file once discovery knows the process.
  const gpreempt::sched::ProcessRecord* hint_peer(uint64_t connection, const Peer& peer,
                                                  std::string& why);
  // Why hints from `p` on a connection of `peer` are ignored (nullopt: they count).
  std::optional<std::string> hint_refusal(const Peer& peer, const gpreempt::sched::ProcessRecord* p,
                                          const std::string& not_found) const;
  // End the open requests begun more than max_request ago; re-arm the timer for the next one.
  void expire_requests();
  void arm_request_expiry();
  // The status document as `viewer` may see it (nullptr: everything).
  nlohmann::ordered_json status(const Peer* viewer) const;
  SocketLimits socket_limits(const DaemonSettings& d) const;

  DaemonOptions options_;
  DaemonConfig config_;
  std::string socket_path_;
  Clock::time_point started_;
  gpreempt::EventLoop loop_;
  MachineFacts machine_;
  // Shared with the discovery worker, which classifies with the snapshot it was last given.
  std::shared_ptr<const gpreempt::sched::Classifier> classifier_;
  // One per GPU, each the tracer of the processes first acted on for it (see the Actuator).
  std::map<gpreempt::sched::GpuId, std::unique_ptr<gpreempt::preempt::Context>> contexts_;
  std::unique_ptr<Actuator> actuator_;
  std::unique_ptr<ProcessTracker> tracker_;
  // After its actuator port and the tracker its observer reads: destroyed before them.
  std::unique_ptr<gpreempt::sched::Runtime> runtime_;
  std::unique_ptr<SocketServer> server_;
  std::unique_ptr<gpreemptd::TransparentTrigger> transparent_;
  std::unique_ptr<gpreemptd::MetricsServer> metrics_;
  std::vector<std::string> reload_not_applied_;  // of the last reload
  Clock::time_point last_publish_{};
  double start_time_unix_s_ = 0;
  gpreempt::EventLoop::Id timer_ = 0;
  gpreempt::EventLoop::Id shutdown_deadline_ = 0;
  bool shutting_down_ = false;

  std::map<gpreempt::sched::GpuId, GpuRecord> gpus_;
  std::map<uint64_t, Clock::time_point> hinted_suspends_;  // action id → hint received
  // While dispatching an event caused by a hint: when the hint was read (observe() keys the
  // suspends it causes by it).
  std::optional<Clock::time_point> hint_in_dispatch_;
  gpreempt::sched::LatencyHistogram hint_to_suspend_;
  // hint_to_suspend_ by hop: socket read → the action handed to the control thread (decode,
  // scheduler, perform) · → the control thread starting it · → its SUSPEND ioctl starting.
  struct HintHops {
    gpreempt::sched::LatencyHistogram decide, handoff, prepare;
  } hint_hops_;
  std::map<std::string, uint64_t> notices_;
  HintRequests hints_;
  gpreempt::EventLoop::Id request_timer_ = 0;
  // When request_timer_ fires (nullopt: disarmed). A later begin never expires first, so a begin
  // arms it only when it is disarmed; an end leaves it (a fire with nothing due re-arms).
  std::optional<Clock::time_point> request_deadline_;
  uint64_t reloads_ = 0, failed_reloads_ = 0;
  uint64_t hints_refused_ = 0;
};

}  // namespace gpreemptd
