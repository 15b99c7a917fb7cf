// What gpreemptd shows of itself: the status document (the socket's `status`, per viewer) and the
// snapshot the metrics endpoint serves.
#include "daemon.h"

#include <unistd.h>

#include "metrics_export.h"
#include "trust_document.h"
#include "status_document.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace client = gpreempt::client;
using Json = nlohmann::ordered_json;

void Daemon::publish_metrics() {
  const auto t = Clock::now();
  if (!metrics_ || t - last_publish_ < std::chrono::milliseconds(50)) return;
  last_publish_ = t;
  StatusSource s;
  s.now = now();
  const sched::RuntimeSnapshot figures = runtime_->snapshot(s.now);
  s.config = &config_;
  s.scheduler = &runtime_->scheduler();
  s.figures = &figures;
  s.processes = &runtime_->processes();
  s.gpus = &gpus_;
  s.reloads = reloads_;
  s.failed_reloads = failed_reloads_;
  s.requests_expired = hints_.expired_total();
  s.hints_rate_limited = hints_.rate_limited();
  s.socket = server_ ? &server_->counters() : nullptr;
  metrics_->publish(metrics_snapshot(s, start_time_unix_s_));
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
  const sched::RuntimeSnapshot figures = runtime_->snapshot(s.now);
  s.config = &config_;
  s.scheduler = &runtime_->scheduler();
  s.figures = &figures;
  s.processes = &runtime_->processes();
  s.gpus = &gpus_;
  s.hint_to_suspend = &hint_to_suspend_;
  s.notices = &notices_;
  s.reloads = reloads_;
  s.failed_reloads = failed_reloads_;
  Json doc = status_document(s);
  doc["daemon"]["hints_refused"] = hints_refused_;
  doc["daemon"]["hints_rate_limited"] = hints_.rate_limited();
  doc["daemon"]["requests_expired"] = hints_.expired_total();
  doc["daemon"]["policy"] = sched::to_string(runtime_->scheduler().config().policy);
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
  // Which rules make a process online tells a user how to become it: root's and control_group's.
  if (!s.only_uid) doc["daemon"]["trust"] = trust_document(config_);
  doc["daemon"]["transparent_watched"] = [&] {
    int n = 0;
    if (transparent_)
      for (const auto& [key, p] : runtime_->processes().all())
        n += transparent_->watching(key) ? 1 : 0;
    return n;
  }();
  return doc;
}

}  // namespace gpreemptd
