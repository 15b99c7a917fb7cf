#include "daemon.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "gpreempt/version.h"
#include "service_notify.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace client = gpreempt::client;

std::chrono::milliseconds Daemon::watchdog_bound(const sched::ArbiterConfig& c) {
  auto bound = std::chrono::duration_cast<std::chrono::milliseconds>(c.max_suspension) * 4;
  return std::max(bound, std::chrono::milliseconds(2000));
}

Daemon::Daemon(DaemonOptions options, DaemonConfig config)
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
  // The Runtime's timer port arms timer_: it exists first.
  timer_ = loop_.add_timer([this] { dispatch(sched::event::TimerFired{}); });
  runtime_ = std::make_unique<sched::Runtime>(
      classifier_->classes(), config_.policy,
      sched::Runtime::Ports{actuator_.get(),
                            [this](std::optional<sched::Time> at) {
                              std::optional<gpreempt::EventLoop::TimePoint> tp;
                              if (at)
                                tp = Clock::time_point(
                                    std::chrono::duration_cast<Clock::duration>(*at));
                              loop_.arm_at(timer_, tp);
                            },
                            [this](sched::Time, const std::vector<sched::Action>& actions) {
                              for (const auto& a : actions) observe(a);
                            },
                            {},
                            [this](sched::Time, const sched::RequestDone& d) { request_done(d); },
                            [this](sched::Time, const sched::ProcessKey& k) { process_left(k); }});
  tracker_ = std::make_unique<ProcessTracker>(
      loop_, options_.roots, options_.discovery_interval, runtime_->processes(),
      [this](sched::Event e) { on_tracker_event(std::move(e)); });
  tracker_->set_container_roots(config_.daemon.containers);
  tracker_->set_classifier(classifier_);
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
  runtime_.reset();  // before its actuator port
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
  spdlog::info("gpreemptd {} ready: config {}, socket {}, {} classes, {} GPUs, policy {}",
               GPREEMPT_VERSION_STRING, config_.source, socket_path_, config_.classes.size(),
               machine_.gpus.size(), sched::to_string(config_.policy.policy));
  if (config_.policy.policy == sched::PolicyName::kNone)
    spdlog::warn("[policy] name = \"none\": requests and time slices suspend nothing; gpreemptd "
                 "only classifies, counts and reports (operator commands still act)");
  if (options_.on_ready) options_.on_ready();
  loop_.run();
  spdlog::info("gpreemptd stopped");
  return 0;
}

void Daemon::dispatch(const sched::Event& e, std::optional<Clock::time_point> hint_received) {
  // Restored, not cleared: a dispatch nested in this one must not take the outer hint with it.
  const auto outer = std::exchange(hint_in_dispatch_, hint_received);
  runtime_->dispatch(now(), e);
  hint_in_dispatch_ = outer;
  check_shutdown_done();
}

void Daemon::observe(const sched::Action& a) {
  if (const auto* s = std::get_if<sched::action::Suspend>(&a)) {
    if (hint_in_dispatch_) hinted_suspends_[s->id] = *hint_in_dispatch_;
    if (spdlog::should_log(spdlog::level::debug)) {
      std::string t;
      for (const auto& k : s->targets) t += (t.empty() ? "" : ", ") + sched::to_string(k);
      spdlog::debug("GPU {}: suspend [{}] ({}, grace {} us)", s->gpu, t,
                    sched::to_string(s->reason),
                    std::chrono::duration_cast<std::chrono::microseconds>(s->grace).count());
    }
  } else if (const auto* r = std::get_if<sched::action::Resume>(&a)) {
    const sched::GpuArbiter* arb = runtime_->scheduler().gpu(r->gpu);
    for (const auto& k : r->targets)
      if (r->reason == sched::ResumeReason::kRecovery && !(arb && arb->has(k)))
        spdlog::info("GPU {}: {} is suspended but no longer managed ({}); resuming it", r->gpu,
                     sched::to_string(k), orphan_reason(r->gpu, k));
    if (spdlog::should_log(spdlog::level::debug)) {
      std::string t;
      for (const auto& k : r->targets) t += (t.empty() ? "" : ", ") + sched::to_string(k);
      spdlog::debug("GPU {}: resume [{}] ({})", r->gpu, t, sched::to_string(r->reason));
    }
  } else if (const auto* p = std::get_if<sched::action::PriorityOnly>(&a)) {
    std::string ranks;
    for (const auto& [key, prio] : p->queue_priorities)
      ranks += (ranks.empty() ? "" : ", ") + sched::to_string(key) + "=" + std::to_string(prio);
    spdlog::info("GPU {} cannot suspend ({}): queue priorities that would rank its processes: {}",
                 p->gpu, p->reason, ranks.empty() ? "none" : ranks);
    gpus_[p->gpu].priority_only = *p;
  }
}

void Daemon::process_left(const sched::ProcessKey& key) {
  actuator_->forget(key);
  if (transparent_ && transparent_->watching(key)) transparent_->unwatch(key);
  hints_.forget_process(key);
}

void Daemon::on_tracker_event(sched::Event e) {
  std::optional<std::pair<sched::ProcessKey, sched::GpuId>> prepare;
  if (auto* c = std::get_if<sched::event::ProcessClassified>(&e); c && c->class_name) {
    // Attach now whatever a higher class could suspend, so the attach is off the request path.
    const sched::SchedClass* cls = runtime_->scheduler().class_named(*c->class_name);
    int top = cls ? cls->priority : 0;
    for (const auto& r : config_.classes) top = std::max(top, r.cls.priority);
    if (cls && cls->priority < top && !c->gpus.empty()) prepare = {c->key, *c->gpus.begin()};
  }
  dispatch(e);
  if (prepare) actuator_->prepare(prepare->first, prepare->second);
  if (auto* c = std::get_if<sched::event::ProcessClassified>(&e))
    if (const sched::ProcessRecord* p = runtime_->processes().find(c->key)) sync_transparent(*p);
}

std::string Daemon::class_of(const sched::ProcessKey& key) const {
  const sched::ProcessRecord* p = runtime_->processes().find(key);
  return p ? p->class_name.value_or("") : "";
}

void Daemon::on_actuation(ActuationReport r) {
  const auto& c = r.completed;
  const sched::Time t = now();
  GpuRecord& rec = gpus_[c.gpu];
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
  runtime_->completed(t, c);
  check_shutdown_done();
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

std::string Daemon::orphan_reason(sched::GpuId gpu, const sched::ProcessKey& key) {
  const sched::ProcessRecord* found = runtime_->processes().find(key);
  if (!found) return "it exited";
  const sched::ProcessRecord& p = *found;
  if (!p.description.queues.count(gpu)) return "it has no queues on this GPU any more";
  if (!p.class_name || !runtime_->scheduler().class_named(*p.class_name))
    return "it matches no class now";
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
  // The Runtime counts every action handed to the actuator until its answer.
  if (!shutting_down_ || !runtime_->settled()) return;
  loop_.stop();
}

}  // namespace gpreemptd
