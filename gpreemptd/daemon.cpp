#include "daemon.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "common/error.h"
#include "common/json_conventions.h"
#include "common/thread_scheduling.h"
#include "control_permission.h"
#include "gpreempt/version.h"
#include "metrics_export.h"
#include "service_notify.h"
#include "status_document.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace client = gpreempt::client;
using Json = nlohmann::ordered_json;

namespace {

constexpr uint64_t kInternalAction = 1ull << 63;  // ids of the daemon's own (orphan) resumes

// The core's watchdog is a backstop behind the scheduler's hard bound, never the policy.
std::chrono::milliseconds watchdog_bound(const sched::ArbiterConfig& c) {
  auto bound = std::chrono::duration_cast<std::chrono::milliseconds>(c.max_suspension) * 4;
  return std::max(bound, std::chrono::milliseconds(2000));
}

}  // namespace

Daemon::Daemon(DaemonOptions options, sched::Config config)
    : options_(std::move(options)), config_(std::move(config)), started_(Clock::now()) {
  start_time_unix_s_ =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Before any thread exists (the core's control thread): every thread inherits the blocked
  // mask, so the signals reach only the loop's signalfd.
  loop_.on_signals({SIGTERM, SIGINT, SIGHUP}, [this](int signo) {
    if (signo == SIGHUP) {
      notify_reloading();
      reload();
      notify_ready("running");
      return;
    }
    begin_shutdown(signo);
  });
  socket_path_ = options_.socket_path.value_or(config_.daemon.socket_path);
  classifier_ = std::make_shared<const sched::Classifier>(config_.classes);
  scheduler_ = std::make_unique<sched::Scheduler>(classifier_->classes(), config_.policy);
  machine_ = probe_machine(options_.roots.kfd_device, options_.topology_root);
  if (machine_.kfd_usable) {
    gpreempt::preempt::ContextOptions co;
    co.device_path = options_.roots.kfd_device;
    co.watchdog_bound = watchdog_bound(config_.policy);
    co.handle_signals = false;  // the loop's signalfd does: Shutdown resumes through the scheduler
    try {
      // A context (a control thread, the tracer of the processes it acts on) per GPU: one GPU's
      // preemption in progress, or hanging until the preemption timeout, holds back no other's.
      for (const auto& g : machine_.gpus)
        contexts_[g.gpu] = std::make_unique<gpreempt::preempt::Context>(co);
    } catch (const std::exception& e) {
      contexts_.clear();
      machine_.kfd_usable = false;
      machine_.problem = std::string("cannot open a gpreempt context: ") + e.what();
      for (auto& g : machine_.gpus) {
        g.can_suspend = false;
        g.reason = machine_.problem;
      }
    }
  }
  if (!machine_.kfd_usable) spdlog::warn("no GPU can be suspended here: {}", machine_.problem);
  std::map<sched::GpuId, uint32_t> clocks;
  for (const auto& g : machine_.gpus) clocks[g.gpu] = g.clock_mhz;
  std::map<sched::GpuId, gpreempt::preempt::Context*> contexts;
  for (const auto& [gpu, context] : contexts_) contexts[gpu] = context.get();
  actuator_ = std::make_unique<Actuator>(
      loop_, contexts, options_.roots.proc, clocks,
      [this](ActuationReport r) { on_actuation(std::move(r)); },
      [this](const gpreempt::preempt::Notice& n) { on_notice(n); });
  tracker_ =
      std::make_unique<ProcessTracker>(loop_, options_.roots, options_.discovery_interval,
                                       [this](sched::Event e) { on_tracker_event(std::move(e)); });
  tracker_->set_container_roots(config_.daemon.containers);
  tracker_->set_classifier(classifier_);
  timer_ = loop_.add_timer([this] { dispatch(sched::event::TimerFired{}); });
  request_timer_ = loop_.add_timer([this] { expire_requests(); });
}

Daemon::~Daemon() {
  metrics_.reset();
  server_.reset();
  transparent_.reset();
  tracker_.reset();
  // The contexts first: each destructor detaches its targets (resume, DISABLE) after the jobs the
  // actuator posted, which still use the actuator.
  contexts_.clear();
  actuator_.reset();
}

sched::Time Daemon::now() const {
  return std::chrono::duration_cast<sched::Time>(Clock::now().time_since_epoch());
}

int Daemon::run() {
  // First, before the socket and the worker threads exist: a configured priority that cannot be
  // had stops the start (nothing silently runs slower than asked). Threads started from here on
  // begin under the normal policy (SCHED_RESET_ON_FORK).
  if (config_.daemon.realtime_priority > 0) {
    try {
      set_realtime_priority(config_.daemon.realtime_priority);
    } catch (const std::exception& e) {
      throw gpreempt::Error(EPERM, "[daemon] realtime_priority = " +
                                       std::to_string(config_.daemon.realtime_priority) + " (" +
                                       config_.source + "): " + e.what() +
                                       "; not starting (set it to 0 to run without)");
    }
    spdlog::info("event loop and control thread run under SCHED_FIFO at priority {}",
                 config_.daemon.realtime_priority);
  }
  server_ = std::make_unique<SocketServer>(
      loop_, socket_path_,
      [this](uint64_t c, const Peer& p, const client::Message& m, Clock::time_point r) {
        return handle(c, p, m, r);
      },
      [this](uint64_t c, const Peer& p) { connection_closed(c, p); },
      socket_limits(config_.daemon));
  for (const auto& g : machine_.gpus) {
    GpuRecord& rec = gpus_[g.gpu];
    rec.name = g.name;
    rec.can_suspend = g.can_suspend;
    rec.reason = g.reason;
    dispatch(sched::event::GpuCapability{g.gpu, g.can_suspend, g.reason});
    if (g.can_suspend)
      spdlog::info("GPU {} ({}): debug-trap suspend available", g.gpu, g.name);
    else
      spdlog::warn("GPU {} ({}): cannot suspend ({}); queue priorities are reported instead", g.gpu,
                   g.name, g.reason);
  }
  start_metrics(options_.metrics_address.value_or(config_.daemon.metrics_address));
  check_policy_gpus();
  tracker_->start();
  spdlog::info("gpreemptd {} ready: config {}, socket {}, {} classes, {} GPUs",
               GPREEMPT_VERSION_STRING, config_.source, socket_path_, config_.classes.size(),
               machine_.gpus.size());
  if (options_.on_ready) options_.on_ready();
  loop_.run();
  spdlog::info("gpreemptd stopped");
  return 0;
}

void Daemon::dispatch(const sched::Event& e, std::optional<Clock::time_point> hint_received) {
  perform(scheduler_->on_event(now(), e), hint_received);
  resume_orphans();
  check_shutdown_done();
}

void Daemon::perform(std::vector<sched::Action> actions,
                     std::optional<Clock::time_point> hint_received) {
  for (auto& a : actions) {
    if (auto* s = std::get_if<sched::action::Suspend>(&a)) {
      if (hint_received) hinted_suspends_[s->id] = *hint_received;
      // Hand the action over first: the log line is not on the path to the ioctl.
      ledger_.posted(s->gpu, s->targets);
      actuator_->suspend(*s);
      if (spdlog::should_log(spdlog::level::debug)) {
        std::string t;
        for (const auto& k : s->targets) t += (t.empty() ? "" : ", ") + sched::to_string(k);
        spdlog::debug("GPU {}: suspend [{}] ({}, grace {} us)", s->gpu, t,
                      sched::to_string(s->reason),
                      std::chrono::duration_cast<std::chrono::microseconds>(s->grace).count());
      }
    } else if (auto* r = std::get_if<sched::action::Resume>(&a)) {
      ledger_.posted(r->gpu, r->targets);
      actuator_->resume(*r);
      if (spdlog::should_log(spdlog::level::debug)) {
        std::string t;
        for (const auto& k : r->targets) t += (t.empty() ? "" : ", ") + sched::to_string(k);
        spdlog::debug("GPU {}: resume [{}] ({})", r->gpu, t, sched::to_string(r->reason));
      }
    } else if (auto* t = std::get_if<sched::action::ArmTimer>(&a)) {
      std::optional<gpreempt::EventLoop::TimePoint> at;
      if (t->at) at = Clock::time_point(std::chrono::duration_cast<Clock::duration>(*t->at));
      loop_.arm_at(timer_, at);
    } else if (auto* p = std::get_if<sched::action::PriorityOnly>(&a)) {
      std::string ranks;
      for (const auto& [key, prio] : p->queue_priorities)
        ranks += (ranks.empty() ? "" : ", ") + sched::to_string(key) + "=" + std::to_string(prio);
      spdlog::info("GPU {} cannot suspend ({}): queue priorities that would rank its processes: {}",
                   p->gpu, p->reason, ranks.empty() ? "none" : ranks);
      gpus_[p->gpu].priority_only = *p;
    }
  }
}

void Daemon::on_tracker_event(sched::Event e) {
  if (auto* x = std::get_if<sched::event::ProcessExited>(&e)) {
    const auto key = x->key;
    ledger_.exited(gpus_, key, now());
    actuator_->forget(key);
    if (transparent_ && transparent_->watching(key)) transparent_->unwatch(key);
    for (auto& [conn, reqs] : open_requests_)
      for (auto it = reqs.begin(); it != reqs.end();)
        it = it->second.key == key ? reqs.erase(it) : std::next(it);
  }
  std::optional<std::pair<sched::ProcessKey, sched::GpuId>> prepare;
  if (auto* c = std::get_if<sched::event::ProcessClassified>(&e); c && c->class_name) {
    // Attach now whatever a higher class could suspend, so the attach is off the request path.
    const sched::SchedClass* cls = scheduler_->class_named(*c->class_name);
    int top = cls ? cls->priority : 0;
    for (const auto& r : config_.classes) top = std::max(top, r.cls.priority);
    if (cls && cls->priority < top && !c->gpus.empty()) prepare = {c->key, *c->gpus.begin()};
  }
  dispatch(e);
  if (prepare) actuator_->prepare(prepare->first, prepare->second);
  if (auto* c = std::get_if<sched::event::ProcessClassified>(&e))
    if (auto it = tracker_->processes().find(c->key.pid);
        it != tracker_->processes().end() && it->second.key == c->key)
      sync_transparent(it->second);
}

void Daemon::sync_transparent(const TrackedProcess& p) {
  const sched::SchedClass* cls = p.class_name ? scheduler_->class_named(*p.class_name) : nullptr;
  const bool want = cls && cls->accepts(sched::RequestSource::kTransparent);
  const bool watching = transparent_ && transparent_->watching(p.key);
  if (want == watching) return;
  if (!want) {
    transparent_->unwatch(p.key);
    return;
  }
  if (!transparent_) {
    gpreempt::daemon::TransparentTriggerConfig tc;
    tc.poll_interval = config_.daemon.poll_interval;
    tc.sources.kfd_sysfs = options_.roots.kfd_sysfs;
    tc.log = [](const std::string& line) { spdlog::info("transparent: {}", line); };
    tc.on_unwatched = [](const sched::ProcessKey& key, const std::string& why) {
      spdlog::info("transparent: no longer watching {}: {}", sched::to_string(key), why);
    };
    transparent_ = std::make_unique<gpreempt::daemon::TransparentTrigger>(
        loop_, tc,
        [this](sched::Time t, sched::Event e) { on_transparent_event(t, std::move(e)); });
  }
  try {
    transparent_->watch(p.key, p.key.pid);
    spdlog::info("transparent: watching the queues of {} (class {})", sched::to_string(p.key),
                 cls->name);
  } catch (const std::exception& e) {
    spdlog::warn("transparent: cannot watch {}: {}", sched::to_string(p.key), e.what());
  }
}

void Daemon::on_transparent_event(sched::Time t, sched::Event e) {
  perform(scheduler_->on_event(t, e), std::nullopt);
  resume_orphans();
  check_shutdown_done();
}

std::string Daemon::class_of(const sched::ProcessKey& key) const {
  auto it = tracker_->processes().find(key.pid);
  if (it == tracker_->processes().end() || it->second.key != key) return "";
  return it->second.class_name.value_or("");
}

SuspensionLedger::Facts Daemon::ledger_facts() {
  return {[this](const sched::ProcessKey& key) {
            const auto& known = tracker_->processes();
            auto it = known.find(key.pid);
            return it != known.end() && it->second.key == key;
          },
          [this](sched::GpuId gpu, const sched::ProcessKey& key) {
            const sched::GpuArbiter* arb = scheduler_->gpu(gpu);
            return arb && arb->has(key);
          },
          [this](const sched::ProcessKey& key) { return class_of(key); }};
}

void Daemon::start_metrics(const std::string& address) {
  if (address.empty()) {
    metrics_.reset();
    return;
  }
  // Bound before the running server (if any) is stopped: a failure leaves it serving.
  auto next = std::make_unique<gpreempt::gpreemptd::MetricsServer>(
      gpreempt::gpreemptd::parse_listen_address(address));
  metrics_ = std::move(next);
  last_publish_ = {};
  spdlog::info("metrics on http://{}:{}/metrics", metrics_->address().host, metrics_->port());
  loop_.set_after_batch([this] { publish_metrics(); });
}

void Daemon::publish_metrics() {
  const auto t = Clock::now();
  if (!metrics_ || t - last_publish_ < std::chrono::milliseconds(50)) return;
  last_publish_ = t;
  StatusSource s;
  s.now = now();
  s.config = &config_;
  s.scheduler = scheduler_.get();
  s.tracker = tracker_.get();
  s.gpus = &gpus_;
  s.reloads = reloads_;
  s.failed_reloads = failed_reloads_;
  s.requests_expired = requests_expired_;
  s.hints_rate_limited = hints_rate_limited_;
  s.socket = server_ ? &server_->counters() : nullptr;
  metrics_->publish(metrics_snapshot(s, start_time_unix_s_));
}

void Daemon::on_actuation(ActuationReport r) {
  const auto& c = r.completed;
  const sched::Time t = now();
  GpuRecord& rec = gpus_[c.gpu];
  ledger_.completed(rec, c, r.suspend, t);
  if (r.suspend) {
    for (double sec : r.ioctl_seconds) rec.ioctl_latency.observe(sec);
    if (auto h = hinted_suspends_.find(c.action); h != hinted_suspends_.end()) {
      if (r.first_ioctl_at) {
        hint_to_suspend_.add(*r.first_ioctl_at - h->second);
        hint_hops_.decide.add(r.posted_at - h->second);
        hint_hops_.handoff.add(r.started_at - r.posted_at);
        hint_hops_.prepare.add(*r.first_ioctl_at - r.started_at);
      }
      hinted_suspends_.erase(h);
    }
  }
  for (const auto& o : c.outcomes) {
    if (o.outcome == sched::event::Outcome::kTimedOut)
      ++(r.suspend ? rec.suspend_timeouts : rec.resume_timeouts);
    if (o.outcome == sched::event::Outcome::kFailed)
      ++(r.suspend ? rec.suspend_failures : rec.resume_failures);
  }
  for (const auto& o : c.outcomes)
    if (o.outcome == sched::event::Outcome::kTimedOut)
      spdlog::warn(
          "GPU {}: the preemption of {} timed out (status bit 30); resuming it and backing off "
          "there",
          c.gpu, sched::to_string(o.key));
    else if (o.outcome == sched::event::Outcome::kFailed)
      spdlog::warn("GPU {}: {} of {} failed: {}", c.gpu, r.suspend ? "suspend" : "resume",
                   sched::to_string(o.key), gpreempt::errno_text(o.error));
  if (c.action & kInternalAction) {
    check_shutdown_done();
    return;
  }
  dispatch(c);
}

void Daemon::on_notice(const gpreempt::preempt::Notice& n) {
  ++notices_[gpreempt::preempt::to_string(n.kind)];
  switch (n.kind) {
    case gpreempt::preempt::NoticeKind::kTargetGone:
      spdlog::info("core: {}", n.message);
      break;
    case gpreempt::preempt::NoticeKind::kQueuesMayStaySuspended:
    case gpreempt::preempt::NoticeKind::kSessionLost:
      spdlog::error("core ({}): {}", gpreempt::preempt::to_string(n.kind), n.message);
      break;
    default:
      spdlog::warn("core ({}): {}", gpreempt::preempt::to_string(n.kind), n.message);
  }
}

void Daemon::resume_orphans() {
  for (auto& [gpu, rec] : gpus_) {
    const std::vector<sched::ProcessKey> orphans = ledger_.orphans(rec, gpu);
    if (orphans.empty()) continue;
    sched::action::Resume r;
    r.id = kInternalAction | next_internal_action_++;
    r.gpu = gpu;
    r.targets = orphans;
    r.reason = sched::ResumeReason::kRecovery;
    for (const auto& k : orphans)
      spdlog::info("GPU {}: {} is suspended but no longer managed ({}); resuming it", gpu,
                   sched::to_string(k), orphan_reason(gpu, k));
    ledger_.posted(gpu, r.targets);
    actuator_->resume(r);
  }
}

std::string Daemon::orphan_reason(sched::GpuId gpu, const sched::ProcessKey& key) {
  const auto& known = tracker_->processes();
  auto it = known.find(key.pid);
  if (it == known.end() || it->second.key != key) return "it exited";
  const TrackedProcess& p = it->second;
  if (!p.queues.count(gpu)) return "it has no queues on this GPU any more";
  if (!p.class_name || !scheduler_->class_named(*p.class_name)) return "it matches no class now";
  return "the scheduler dropped it here";
}

void Daemon::begin_shutdown(int signo) {
  if (shutting_down_) {
    spdlog::info("signal {} again: still resuming what is suspended", signo);
    return;
  }
  spdlog::info("signal {}: resuming everything suspended, then exiting", signo);
  notify_stopping();
  shutting_down_ = true;
  shutdown_deadline_ = loop_.add_timer([this] {
    spdlog::warn(
        "resumes did not complete within 10 s; exiting (the core resumes its targets on detach)");
    loop_.stop();
  });
  loop_.arm_at(shutdown_deadline_, Clock::now() + std::chrono::seconds(10));
  dispatch(sched::event::Shutdown{});
}

void Daemon::check_shutdown_done() {
  if (!shutting_down_ || actuator_->in_flight() > 0) return;
  for (const auto& [gpu, rec] : gpus_)
    if (!rec.suspended_since.empty()) return;
  loop_.stop();
}

std::vector<std::string> Daemon::reload() {
  std::vector<std::string> errors;
  if (options_.config_path.empty()) {
    spdlog::info("reload: no config file (built-in classes); nothing to re-read");
    ++reloads_;
    return errors;
  }
  auto r = sched::check_config(options_.config_path);
  if (!r.config) {
    for (const auto& e : r.errors) errors.push_back(e.to_string());
    ++failed_reloads_;
    for (const auto& e : errors) spdlog::error("{}", e);
    spdlog::error("reload of {} rejected ({} error{}); the running config stays in effect",
                  options_.config_path, errors.size(), errors.size() == 1 ? "" : "s");
    return errors;
  }
  reload_not_applied_ = apply_daemon_settings(r.config->daemon);
  for (const auto& w : r.warnings) spdlog::warn("{}", w.to_string());
  config_ = std::move(*r.config);
  // The core's backstop follows max_suspension like every other bound.
  for (auto& [gpu, context] : contexts_) context->set_watchdog_bound(watchdog_bound(config_.policy));
  apply_classes();
  arm_request_expiry();  // max_request_ms may have changed
  check_policy_gpus();
  ++reloads_;
  spdlog::info("reloaded {}: {} classes{}", options_.config_path, config_.classes.size(),
               reload_not_applied_.empty() ? "" : " (some [daemon] settings kept, see above)");
  return errors;
}

void Daemon::check_policy_gpus() const {
  for (const auto& [gpu, slices] : config_.policy.gpu_time_slice)
    if (!gpus_.count(gpu))
      spdlog::warn("[[policy.gpu]] gpu_id {}: no such GPU here (GPUs: {}); it applies to none", gpu,
                   [&] {
                     std::string ids;
                     for (const auto& [id, rec] : gpus_)
                       ids += (ids.empty() ? "" : ", ") + std::to_string(id);
                     return ids.empty() ? std::string("none") : ids;
                   }());
}

std::vector<std::string> Daemon::apply_daemon_settings(sched::DaemonSettings& next) {
  const sched::DaemonSettings& now = config_.daemon;
  std::vector<std::string> kept;
  auto keep = [&](std::string why) {
    spdlog::error("reload: {}", why);
    kept.push_back(std::move(why));
  };
  if (next.socket_path != now.socket_path) {
    if (options_.socket_path) {
      spdlog::info("reload: [daemon] socket is now {}, but --socket {} (command line) stays",
                   next.socket_path, *options_.socket_path);
    } else {
      try {
        server_->rebind(next.socket_path);
        socket_path_ = next.socket_path;
        spdlog::info("reload: the socket moved to {}", socket_path_);
      } catch (const std::exception& e) {
        keep(std::string("the socket stays on ") + socket_path_ + ": " + e.what());
        next.socket_path = now.socket_path;
      }
    }
  }
  if (next.metrics_address != now.metrics_address) {
    if (options_.metrics_address) {
      spdlog::info("reload: [daemon] metrics is now '{}', but --metrics '{}' (command line) stays",
                   next.metrics_address, *options_.metrics_address);
    } else {
      try {
        start_metrics(next.metrics_address);
        if (next.metrics_address.empty()) spdlog::info("reload: metrics endpoint turned off");
      } catch (const std::exception& e) {
        keep("the metrics endpoint stays on " +
             (metrics_ ? metrics_->address().host + ":" + std::to_string(metrics_->port())
                       : std::string("(none)")) +
             ": " + e.what());
        next.metrics_address = now.metrics_address;
      }
    }
  }
  if (next.poll_interval != now.poll_interval) {
    // Only the timer's period changes: what each watched queue was doing is kept.
    if (transparent_) transparent_->set_poll_interval(next.poll_interval);
    spdlog::info("reload: transparent poll interval {} us",
                 std::chrono::duration_cast<std::chrono::microseconds>(next.poll_interval).count());
  }
  if (next.realtime_priority != now.realtime_priority) {
    try {
      set_realtime_priority(next.realtime_priority);
      spdlog::info("reload: event loop and control thread {}",
                   next.realtime_priority > 0
                       ? "under SCHED_FIFO at priority " + std::to_string(next.realtime_priority)
                       : std::string("back under the normal policy"));
    } catch (const std::exception& e) {
      try {
        set_realtime_priority(now.realtime_priority);  // both threads as they were
      } catch (const std::exception&) {
        // The loop thread's change is what failed or was undone; nothing else to restore.
      }
      keep("the real-time priority stays " + std::to_string(now.realtime_priority) + ": " +
           e.what());
      next.realtime_priority = now.realtime_priority;
    }
  }
  if (server_) server_->set_limits(socket_limits(next));
  if (next.containers != now.containers) {
    // Another root may name the same ids differently: nothing cached stays (a new resolver).
    tracker_->set_container_roots(next.containers);
    spdlog::info("reload: container roots docker='{}' containerd='{}' crio='{}'",
                 next.containers.docker, next.containers.containerd, next.containers.crio);
  }
  return kept;
}

void Daemon::set_realtime_priority(int priority) {
  gpreempt::set_thread_realtime_priority(pthread_self(), priority);
  for (auto& [gpu, context] : contexts_) context->set_control_thread_realtime_priority(priority);
}

void Daemon::apply_classes() {
  classifier_ = std::make_shared<const sched::Classifier>(config_.classes);
  perform(scheduler_->reconfigure(now(), classifier_->classes(), config_.policy), std::nullopt);
  // The processes' classes follow within one discovery pass: the worker re-classifies them all
  // with this snapshot (its /proc reads stay off this thread) and reports the changed ones.
  tracker_->set_classifier(classifier_);
  resume_orphans();
  // A class may have gained or lost its transparent trigger without any process changing class.
  for (const auto& [pid, p] : tracker_->processes()) sync_transparent(p);
}

SocketLimits Daemon::socket_limits(const sched::DaemonSettings& d) const {
  SocketLimits l;
  l.max_connections_per_uid = d.max_connections_per_uid;
  l.idle_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(d.idle_timeout);
  l.proc_root = options_.roots.proc;
  return l;
}

const TrackedProcess* Daemon::hint_peer(uint64_t connection, const Peer& peer, std::string& why) {
  const std::string who = "pid " + std::to_string(peer.pid);
  if (!peer.start_time_ticks) {
    why = who + " exited before gpreemptd accepted its connection: hints on it are ignored";
    return nullptr;
  }
  // Its pid may name another process by now: that one gets none of this connection's rights.
  if (server_->peer_exited(connection)) {
    why = who + ", which opened this connection, has exited: hints on it are ignored";
    return nullptr;
  }
  const sched::ProcessKey key{peer.pid, *peer.start_time_ticks};
  const auto& all = tracker_->processes();
  if (auto it = all.find(peer.pid); it != all.end() && it->second.key == key) return &it->second;
  // Not reported by discovery yet (or its pid's record is older news): read it now, once.
  const TrackedProcess* p = tracker_->find(peer.pid);
  if (p && p->key == key) return p;
  why = who +
        " is not a GPU process gpreemptd knows (it has not opened /dev/kfd, or it exited): its "
        "hints are ignored";
  return nullptr;
}

std::optional<std::string> Daemon::hint_refusal(const Peer& peer, const TrackedProcess* p,
                                                const std::string& not_found) const {
  // Checked first without building a sentence: this runs on every hint.
  if (p && p->class_name && p->uid == peer.uid) {
    if (const sched::SchedClass* cls = scheduler_->class_named(*p->class_name);
        cls && cls->accepts(sched::RequestSource::kHint) &&
        std::any_of(config_.classes.begin(), config_.classes.end(),
                    [&](const auto& r) { return r.cls.priority < cls->priority; }))
      return std::nullopt;
  }
  if (!p) return not_found;
  const std::string who = "pid " + std::to_string(peer.pid);
  // The connection's credentials, not the process's own: a process that changed its uid since it
  // connected speaks with the rights it had then, and they must be the process's.
  if (p->uid != peer.uid)
    return who + " runs as uid " + std::to_string(p->uid) + " but connected as uid " +
           std::to_string(peer.uid) +
           ": a hint counts only from the user the process runs as, so its hints are ignored";
  if (!p->class_name) return who + " matches no class: its hints are ignored";
  const sched::SchedClass* cls = scheduler_->class_named(*p->class_name);
  if (!cls) return who + " matches no class: its hints are ignored";
  const std::string in =
      who + " is in class " + cls->name + " (priority " + std::to_string(cls->priority) + ")";
  if (!cls->accepts(sched::RequestSource::kHint))
    return in + ", whose triggers do not include hint: its hints are ignored";
  bool lower = false;
  for (const auto& r : config_.classes) lower = lower || r.cls.priority < cls->priority;
  if (!lower)
    return in + ": its hints are ignored (no class has a lower priority for them to preempt)";
  return std::nullopt;
}

bool Daemon::take_hint_token(uint64_t connection, Clock::time_point now) {
  const double rate = config_.daemon.hint_rate, burst = config_.daemon.hint_burst;
  auto [it, fresh] = hint_buckets_.try_emplace(connection, HintBucket{burst, now});
  HintBucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst, b.tokens + rate * std::chrono::duration<double>(now - b.at).count());
    b.at = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

void Daemon::arm_request_expiry() {
  std::optional<Clock::time_point> first;
  for (const auto& [connection, open] : open_requests_)
    for (const auto& [id, r] : open)
      if (!first || r.started < *first) first = r.started;
  request_deadline_ = first ? std::optional(*first + config_.policy.max_request) : std::nullopt;
  loop_.arm_at(request_timer_, request_deadline_);
}

void Daemon::expire_requests() {
  const auto now = Clock::now();
  const auto limit = config_.policy.max_request;
  std::vector<std::pair<uint64_t, uint64_t>> due;  // connection, client id
  for (const auto& [connection, open] : open_requests_)
    for (const auto& [id, r] : open)
      if (now - r.started >= limit) due.emplace_back(connection, id);
  for (const auto& [connection, client_id] : due) {
    auto c = open_requests_.find(connection);
    if (c == open_requests_.end()) continue;
    auto it = c->second.find(client_id);
    if (it == c->second.end()) continue;
    const OpenRequest r = it->second;
    c->second.erase(it);
    ++requests_expired_;
    auto& kept = expired_requests_[connection];
    if (kept.size() >= kMaxExpiredKept) kept.erase(kept.begin());
    kept.insert(client_id);
    spdlog::warn("request {} of {} not ended within max_request_ms = {}: ending it", client_id,
                 sched::to_string(r.key),
                 std::chrono::duration_cast<std::chrono::milliseconds>(limit).count());
    dispatch(sched::event::RequestFinished{r.key, r.id, sched::RequestSource::kHint});
  }
  arm_request_expiry();
}

client::Reply Daemon::handle(uint64_t connection, const Peer& peer, const client::Message& m,
                             Clock::time_point received) {
  using client::ErrorCode;
  using client::Op;
  if (client::needs_control_permission(m.op))
    if (auto why = control_refusal(peer, config_.daemon.control_group, client::to_string(m.op)))
      return client::error_reply(m.seq, ErrorCode::kNotPermitted, *why);
  switch (m.op) {
    case Op::kHello: {
      std::string not_found;
      const TrackedProcess* p = hint_peer(connection, peer, not_found);
      auto refusal = hint_refusal(peer, p, not_found);
      Json body = {{"daemon_version", GPREEMPT_VERSION_STRING},
                   {"protocol", client::kProtocolVersion},
                   {"pid", peer.pid},
                   {"class", p && p->class_name ? Json(*p->class_name) : Json()},
                   {"may_preempt", !refusal.has_value()}};
      if (refusal) body["reason"] = *refusal;
      return client::ok_reply(m.seq, body);
    }
    case Op::kBegin:
    case Op::kEnd:
    case Op::kExpect: {
      if (shutting_down_)
        return client::error_reply(m.seq, ErrorCode::kUnavailable, "gpreemptd is shutting down");
      auto& open = open_requests_[connection];
      if (m.op == Op::kEnd) {
        auto it = open.find(m.request);
        if (it == open.end()) {
          // Ended by the daemon already: the client's `end` is no mistake of its own.
          if (auto x = expired_requests_.find(connection);
              x != expired_requests_.end() && x->second.erase(m.request))
            return client::ok_reply(
                m.seq, {{"expired", true},
                        {"max_request_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                               config_.policy.max_request)
                                               .count()}});
          return client::error_reply(
              m.seq, ErrorCode::kBadRequest,
              "request " + std::to_string(m.request) + " was not begun on this connection");
        }
        const OpenRequest r = it->second;
        open.erase(it);
        std::string ignored;
        if (const TrackedProcess* p = hint_peer(connection, peer, ignored); p && p->key == r.key) {
          const std::string cls = p->class_name.value_or("");
          for (auto g : p->gpus()) {
            GpuRecord& rec = gpus_[g];
            rec.online_latency.add(received - r.started);
            ++rec.by_class[cls].requests;
            ++rec.by_process[r.key].requests;
            auto h = rec.class_latency
                         .try_emplace(cls, gpreempt::gpreemptd::Histogram::request_latency())
                         .first;
            h->second.observe(std::chrono::duration<double>(received - r.started).count());
          }
        }
        dispatch(sched::event::RequestFinished{r.key, r.id, sched::RequestSource::kHint});
        return client::ok_reply(m.seq);
      }
      // Every begin and expect costs a token, refused or not: a flood of either is work.
      if (!take_hint_token(connection, received)) {
        ++hints_rate_limited_;
        return client::error_reply(
            m.seq, ErrorCode::kUnavailable,
            std::string(client::to_string(m.op)) + " refused: this connection sends hints faster than " +
                std::to_string(config_.daemon.hint_rate) + " per second (burst " +
                std::to_string(config_.daemon.hint_burst) +
                ", [daemon] hint_rate and hint_burst); it was not applied");
      }
      std::string not_found;
      const TrackedProcess* p = hint_peer(connection, peer, not_found);
      if (auto why = hint_refusal(peer, p, not_found)) {
        ++hints_refused_;
        return client::error_reply(m.seq, ErrorCode::kNotPermitted, *why);
      }
      if (m.op == Op::kExpect) {
        dispatch(sched::event::RequestExpected{p->key, std::chrono::microseconds(m.in_us),
                                               sched::RequestSource::kHint},
                 received);
        return client::ok_reply(m.seq);
      }
      if (open.count(m.request))
        return client::error_reply(
            m.seq, ErrorCode::kBadRequest,
            "request " + std::to_string(m.request) + " is already open on this connection");
      OpenRequest r{next_request_++, p->key, received};
      open[m.request] = r;
      if (auto x = expired_requests_.find(connection); x != expired_requests_.end())
        x->second.erase(m.request);  // the id is reused: its `end` is this request's
      dispatch(sched::event::RequestStarted{r.key, r.id, sched::RequestSource::kHint}, received);
      if (!request_deadline_) arm_request_expiry();
      return client::ok_reply(m.seq);
    }
    case Op::kStatus: {
      // Everyone's processes and command lines, and the rules that classify them, only for those
      // who may control the daemon; others see their own processes.
      const bool full =
          !control_refusal(peer, config_.daemon.control_group, client::to_string(m.op));
      return client::ok_reply(m.seq, status(full ? nullptr : &peer));
    }
    case Op::kReload: {
      notify_reloading();
      auto errors = reload();
      notify_ready("running");
      if (!errors.empty()) {
        std::string msg = "the config file was rejected; the running config stays in effect:";
        for (const auto& e : errors) msg += "\n" + e;
        return client::error_reply(m.seq, ErrorCode::kUnavailable, msg);
      }
      return client::ok_reply(
          m.seq,
          {{"config_path", options_.config_path.empty() ? Json() : Json(options_.config_path)},
           {"classes", config_.classes.size()},
           {"not_applied", reload_not_applied_}});
    }
    case Op::kSuspend:
    case Op::kResume:
      return operator_command(m);
  }
  return client::error_reply(m.seq, ErrorCode::kBadRequest, "unknown op");
}

client::Reply Daemon::operator_command(const client::Message& m) {
  using client::ErrorCode;
  const bool suspend = m.op == client::Op::kSuspend;
  if (shutting_down_)
    return client::error_reply(m.seq, ErrorCode::kUnavailable, "gpreemptd is shutting down");
  sched::event::OperatorTarget t;
  if (m.target.class_name) {
    if (!scheduler_->class_named(*m.target.class_name)) {
      std::string names;
      for (const auto& r : config_.classes) names += (names.empty() ? "" : ", ") + r.cls.name;
      return client::error_reply(
          m.seq, ErrorCode::kUnknownTarget,
          "no class named '" + *m.target.class_name + "' (classes: " + names + ")");
    }
    t.class_name = *m.target.class_name;
  } else if (m.target.pid) {
    const TrackedProcess* p = tracker_->find(*m.target.pid);
    if (!p)
      return client::error_reply(m.seq, ErrorCode::kUnknownTarget,
                                 "pid " + std::to_string(*m.target.pid) +
                                     " is not a GPU process gpreemptd knows (it has not opened "
                                     "/dev/kfd, or it exited)");
    if (!p->class_name)
      return client::error_reply(
          m.seq, ErrorCode::kUnknownTarget,
          "pid " + std::to_string(*m.target.pid) + " matches no class: gpreemptd leaves it alone");
    t.key = p->key;
  } else {
    return client::error_reply(m.seq, ErrorCode::kBadRequest, "a target needs a class or a pid");
  }
  if (m.target.gpu_id) {
    const auto ids = scheduler_->gpus();
    if (!gpus_.count(*m.target.gpu_id) &&
        std::find(ids.begin(), ids.end(), *m.target.gpu_id) == ids.end())
      return client::error_reply(m.seq, ErrorCode::kUnknownTarget,
                                 "no GPU with gpu_id " + std::to_string(*m.target.gpu_id));
    t.gpu = *m.target.gpu_id;
  }
  const auto pairs = scheduler_->operator_targets(t);
  Json targets = Json::array();
  std::set<sched::GpuId> gpus;
  Json cannot = Json::array();
  for (const auto& x : pairs) {
    targets.push_back({{"pid", x.key.pid},
                       {"start_time_ticks", x.key.start_time_ticks},
                       {"class", class_of(x.key)},
                       {"gpu_id", x.gpu}});
    if (gpus.insert(x.gpu).second)
      if (const auto* a = scheduler_->gpu(x.gpu); a && !a->can_suspend()) cannot.push_back(x.gpu);
  }
  Json body = {{"targets", targets}, {"gpus", Json(gpus)}};
  if (suspend) {
    // max_suspension ends it earlier: say so rather than promise the time asked.
    const sched::Duration asked = std::chrono::milliseconds(m.for_ms);
    const sched::Duration effective = std::min(asked, scheduler_->config().max_suspension);
    dispatch(sched::event::OperatorSuspend{t, asked});
    const auto until = std::chrono::system_clock::now() + effective;
    body["for_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(effective).count();
    body["until_unix_s"] = gpreempt::json_conventions::round_to(
        std::chrono::duration<double>(until.time_since_epoch()).count(), 3);
    if (effective < asked)
      body["bounded_by"] =
          "max_suspension_ms = " +
          std::to_string(scheduler_->config().max_suspension / std::chrono::milliseconds(1));
  } else {
    dispatch(sched::event::OperatorResume{t});
  }
  if (!cannot.empty()) body["gpus_without_suspend"] = cannot;
  spdlog::info("operator {} {}{} for {} target(s)", suspend ? "suspend" : "resume",
               t.class_name ? "class " + *t.class_name : "pid " + std::to_string(t.key->pid),
               suspend ? " (" + std::to_string(m.for_ms) + " ms)" : "", pairs.size());
  return client::ok_reply(m.seq, body);
}

void Daemon::connection_closed(uint64_t connection, const Peer& peer) {
  hint_buckets_.erase(connection);
  expired_requests_.erase(connection);
  auto it = open_requests_.find(connection);
  if (it == open_requests_.end()) return;
  auto open = std::move(it->second);
  open_requests_.erase(it);
  if (!open.empty())
    spdlog::info("pid {} disconnected with {} open request{}: ending them", peer.pid, open.size(),
                 open.size() == 1 ? "" : "s");
  for (const auto& [client_id, r] : open)
    dispatch(sched::event::RequestFinished{r.key, r.id, sched::RequestSource::kHint});
}

Json Daemon::status(const Peer* viewer) const {
  StatusSource s;
  if (viewer) s.only_uid = viewer->uid;
  s.pid = static_cast<int>(::getpid());
  s.config_path = options_.config_path;
  s.socket_path = socket_path_;
  s.uptime_s = std::chrono::duration<double>(Clock::now() - started_).count();
  s.kfd_version = machine_.kfd_version.value_or("");
  s.shutting_down = shutting_down_;
  s.now = now();
  s.config = &config_;
  s.scheduler = scheduler_.get();
  s.tracker = tracker_.get();
  s.gpus = &gpus_;
  s.hint_to_suspend = &hint_to_suspend_;
  s.notices = &notices_;
  s.reloads = reloads_;
  s.failed_reloads = failed_reloads_;
  Json doc = status_document(s);
  doc["daemon"]["hints_refused"] = hints_refused_;
  doc["daemon"]["hints_rate_limited"] = hints_rate_limited_;
  doc["daemon"]["requests_expired"] = requests_expired_;
  doc["daemon"]["max_request_ms"] =
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.policy.max_request).count();
  doc["daemon"]["discovery_listing_failures"] = tracker_->listing_failures();
  if (server_) {
    const SocketCounters& c = server_->counters();
    doc["daemon"]["connections"] = {{"open", server_->connections()},
                                    {"accepted", c.accepted},
                                    {"refused_per_uid_cap", c.refused_per_uid_cap},
                                    {"refused_no_descriptor", c.refused_no_descriptor},
                                    {"dropped_slow_reader", c.dropped_slow_reader},
                                    {"closed_idle", c.closed_idle},
                                    {"unidentified", c.unidentified}};
  }
  doc["daemon"]["hint_to_suspend_hops_us"] = {
      {"decide", latency_summary_json(hint_hops_.decide, true)},
      {"handoff", latency_summary_json(hint_hops_.handoff, true)},
      {"prepare", latency_summary_json(hint_hops_.prepare, true)}};
  doc["daemon"]["metrics_endpoint"] =
      metrics_ ? Json(metrics_->address().host + ":" + std::to_string(metrics_->port())) : Json();
  doc["daemon"]["poll_interval_us"] =
      std::chrono::duration_cast<std::chrono::microseconds>(
          transparent_ ? transparent_->poll_interval() : config_.daemon.poll_interval)
          .count();
  doc["daemon"]["realtime_priority"] = config_.daemon.realtime_priority;
  doc["daemon"]["transparent_watched"] = [&] {
    int n = 0;
    if (transparent_)
      for (const auto& [pid, p] : tracker_->processes()) n += transparent_->watching(p.key) ? 1 : 0;
    return n;
  }();
  return doc;
}

}  // namespace gpreemptd
