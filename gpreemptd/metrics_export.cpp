#include "metrics_export.h"

#include "gpreempt/version.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace m = gpreemptd;

namespace {
double seconds(sched::Duration d) {
  return std::chrono::duration<double>(d).count();
}
}  // namespace

m::MetricsSnapshot metrics_snapshot(const StatusSource& s, double start_time_unix_s) {
  m::MetricsSnapshot out;
  out.daemon.version = GPREEMPT_VERSION_STRING;
  out.daemon.start_time_seconds = start_time_unix_s;
  out.daemon.config_reloads_total = s.reloads;
  out.daemon.config_reload_failures_total = s.failed_reloads;
  out.daemon.requests_expired_total = s.requests_expired;
  out.daemon.hints_rate_limited_total = s.hints_rate_limited;
  if (s.socket) {
    out.daemon.connections_refused_per_uid_cap_total = s.socket->refused_per_uid_cap;
    out.daemon.connections_refused_no_descriptor_total = s.socket->refused_no_descriptor;
    out.daemon.connections_dropped_slow_reader_total = s.socket->dropped_slow_reader;
    out.daemon.connections_closed_idle_total = s.socket->closed_idle;
  }
  for (const auto& rule : s.config->classes) {
    if (!rule.cls.objective) continue;
    const auto& slo = s.scheduler->objectives();
    for (const sched::Goal& goal : rule.cls.objective->goals()) {
      m::ObjectiveMetrics o;
      o.class_name = rule.cls.name;
      o.metric = sched::to_string(goal.metric);
      o.percentile = goal.percentile;
      o.target_seconds = seconds(goal.target);
      if (auto v = slo.measured(rule.cls.name, goal, s.now)) o.latency_seconds = seconds(*v);
      o.action = sched::to_string(slo.action(rule.cls.name));
      if (auto it = slo.states().find(rule.cls.name); it != slo.states().end())
        o.action_changes_total = it->second.changes;
      out.objectives.push_back(std::move(o));
    }
  }
  for (const auto& [id, rec] : *s.gpus) {
    const sched::GpuArbiter* arb = s.scheduler->gpu(id);
    m::GpuMetrics g;
    g.gpu_id = id;
    g.can_suspend = arb ? arb->can_suspend() : rec.can_suspend;
    if (arb) {
      for (const auto& [key, mem] : arb->members())
        if (mem.state == sched::MemberState::kSuspended) ++g.suspended_processes;
    }
    const sched::RuntimeSnapshot::Gpu& fig = s.figures->gpu(id);
    g.suspend_calls_total = fig.actions.suspend_actions;
    g.resume_calls_total = fig.actions.resume_actions;
    g.suspend_failures_total = rec.suspend_failures;
    g.suspend_timeouts_total = rec.suspend_timeouts;
    g.resume_failures_total = rec.resume_failures;
    g.resume_timeouts_total = rec.resume_timeouts;
    g.suspend_latency_seconds = rec.ioctl_latency;
    out.gpus.push_back(std::move(g));

    // Classes: every configured one (with its totals on this GPU) and "" for unclassified.
    std::map<std::string, m::ClassMetrics> classes;
    for (const auto& rule : s.config->classes) classes[rule.cls.name];
    for (const auto& [name, share] : fig.by_class) classes[name];
    for (const auto& [name, n] : fig.requests.by_class) classes[name];
    for (const auto& [key, p] : s.processes->all()) {
      if (!p.description.queues.count(id)) continue;
      const std::string cls = p.class_name.value_or("");
      ++classes[cls].processes;
      m::ProcessMetrics pm;
      pm.gpu_id = id;
      pm.class_name = cls;
      pm.pid = key.pid;
      if (auto t = fig.by_process.find(p.key); t != fig.by_process.end()) {
        pm.suspensions_total = t->second.suspensions;
        pm.suspended_seconds_total = seconds(t->second.suspended);
      }
      if (auto r = fig.requests.by_process.find(p.key); r != fig.requests.by_process.end())
        pm.requests_total = r->second;
      out.processes.push_back(pm);
    }
    for (auto& [name, c] : classes) {
      c.gpu_id = id;
      c.class_name = name;
      if (auto t = fig.by_class.find(name); t != fig.by_class.end()) {
        c.suspensions_total = t->second.suspensions;
        c.suspended_seconds_total = seconds(t->second.suspended);
      }
      if (auto r = fig.requests.by_class.find(name); r != fig.requests.by_class.end())
        c.requests_total = r->second;
      if (auto h = rec.class_latency.find(name); h != rec.class_latency.end())
        c.request_latency_seconds = h->second;
      out.classes.push_back(c);
    }
  }
  return out;
}

}  // namespace gpreemptd
