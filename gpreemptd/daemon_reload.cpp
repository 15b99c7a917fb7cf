// gpreemptd's configuration after the start: a reload (SIGHUP or `gpreempt ctl reload`) re-reads
// the file and applies it whole or not at all, the [daemon] settings it can change while running
// (socket, metrics listener, poll interval, container roots, limits) and the real-time priority.
#include "daemon.h"

#include <spdlog/spdlog.h>

#include "common/error.h"
#include "common/thread_scheduling.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace client = gpreempt::client;
using Json = nlohmann::ordered_json;

std::vector<std::string> Daemon::reload() {
  std::vector<std::string> errors;
  if (options_.config_path.empty()) {
    spdlog::info("reload: no config file (built-in classes); nothing to re-read");
    ++reloads_;
    return errors;
  }
  auto r = check_daemon_config(options_.config_path);
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

std::vector<std::string> Daemon::apply_daemon_settings(DaemonSettings& next) {
  const DaemonSettings& now = config_.daemon;
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
  if (runtime_->scheduler().config().policy != config_.policy.policy)
    spdlog::info("reload: policy {} (was {})", sched::to_string(config_.policy.policy),
                 sched::to_string(runtime_->scheduler().config().policy));
  classifier_ = std::make_shared<const sched::Classifier>(config_.classes);
  runtime_->reconfigure(now(), classifier_->classes(), config_.policy);
  // The processes' classes follow within one discovery pass: the worker re-classifies them all
  // with this snapshot (its /proc reads stay off this thread) and reports the changed ones.
  tracker_->set_classifier(classifier_);
  // A class may have gained or lost its transparent trigger without any process changing class.
  for (const auto& [key, p] : runtime_->processes().all()) sync_transparent(p);
}

SocketLimits Daemon::socket_limits(const DaemonSettings& d) const {
  SocketLimits l;
  l.max_connections_per_uid = d.max_connections_per_uid;
  l.idle_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(d.idle_timeout);
  l.proc_root = options_.roots.proc;
  return l;
}

void Daemon::start_metrics(const std::string& address) {
  if (address.empty()) {
    metrics_.reset();
    return;
  }
  // Bound before the running server (if any) is stopped: a failure leaves it serving.
  auto next = std::make_unique<gpreemptd::MetricsServer>(
      gpreemptd::parse_listen_address(address));
  metrics_ = std::move(next);
  last_publish_ = {};
  spdlog::info("metrics on http://{}:{}/metrics", metrics_->address().host, metrics_->port());
  loop_.set_after_batch([this] { publish_metrics(); });
}

}  // namespace gpreemptd
