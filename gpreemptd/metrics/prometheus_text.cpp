#include "metrics/prometheus_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace gpreemptd {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Shortest round-trip form: 0.5, 1e-05, 12 (an integral double prints without ".0").
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string label_text(const Labels& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return out + "}";
}

// One family: HELP and TYPE once, then every sample, so the families never interleave.
class Family {
 public:
  Family(std::string name, std::string type, std::string help)
      : name_(std::move(name)), type_(std::move(type)), help_(std::move(help)) {}

  void sample(const Labels& labels, const std::string& value) {
    body_ += name_ + label_text(labels) + " " + value + "\n";
  }
  void sample(const Labels& labels, double value) { sample(labels, format_value(value)); }
  void sample(const Labels& labels, std::uint64_t value) { sample(labels, std::to_string(value)); }

  void histogram(const Labels& labels, const Histogram& h) {
    if (h.bucket_counts.size() != h.upper_bounds.size() + 1)
      throw std::invalid_argument("histogram " + name_ + " has " +
                                  std::to_string(h.bucket_counts.size()) + " bucket counts for " +
                                  std::to_string(h.upper_bounds.size()) +
                                  " bounds (expected one more, for +Inf)");
    std::uint64_t cumulative = 0;
    auto bucket = [&](const std::string& le) {
      Labels with_le = labels;
      with_le.emplace_back("le", le);
      body_ += name_ + "_bucket" + label_text(with_le) + " " + std::to_string(cumulative) + "\n";
    };
    for (std::size_t i = 0; i < h.upper_bounds.size(); ++i) {
      cumulative += h.bucket_counts[i];
      bucket(format_value(h.upper_bounds[i]));
    }
    cumulative += h.bucket_counts.back();
    bucket("+Inf");
    body_ += name_ + "_sum" + label_text(labels) + " " + format_value(h.sum) + "\n";
    body_ += name_ + "_count" + label_text(labels) + " " + std::to_string(cumulative) + "\n";
  }

  void append_to(std::string& out) const {
    if (body_.empty()) return;
    out += "# HELP " + name_ + " " + escape_help(help_) + "\n";
    out += "# TYPE " + name_ + " " + type_ + "\n";
    out += body_;
  }

 private:
  std::string name_, type_, help_;
  std::string body_;
};

template <typename T, typename Key>
std::vector<const T*> sorted(const std::vector<T>& items, Key key) {
  std::vector<const T*> out;
  out.reserve(items.size());
  for (const auto& i : items) out.push_back(&i);
  std::stable_sort(out.begin(), out.end(), [&](const T* a, const T* b) { return key(*a) < key(*b); });
  return out;
}

Labels gpu_labels(std::uint32_t gpu) { return {{"gpu", std::to_string(gpu)}}; }
Labels class_labels(std::uint32_t gpu, const std::string& cls) {
  return {{"gpu", std::to_string(gpu)}, {"class", cls}};
}
Labels process_labels(std::uint32_t gpu, const std::string& cls, int pid) {
  return {{"gpu", std::to_string(gpu)}, {"class", cls}, {"pid", std::to_string(pid)}};
}

}  // namespace

std::string render_prometheus_text(const MetricsSnapshot& s) {
  std::string out;

  // The daemon itself.
  {
    Family info("gpreempt_daemon_info", "gauge", "gpreemptd build information (always 1).");
    info.sample({{"version", s.daemon.version}}, std::uint64_t{1});
    info.append_to(out);
    Family start("gpreempt_daemon_start_time_seconds", "gauge",
                 "Unix time gpreemptd started, in seconds.");
    start.sample({}, s.daemon.start_time_seconds);
    start.append_to(out);
    Family reloads("gpreempt_config_reloads_total", "counter",
                   "Configuration reloads (SIGHUP or gpreempt ctl reload) that took effect.");
    reloads.sample({}, s.daemon.config_reloads_total);
    reloads.append_to(out);
    Family rejected("gpreempt_config_reload_failures_total", "counter",
                    "Configuration reloads rejected as invalid; the running configuration was kept.");
    rejected.sample({}, s.daemon.config_reload_failures_total);
    rejected.append_to(out);
    Family expired("gpreempt_requests_expired_total", "counter",
                   "Hinted requests gpreemptd ended because no end came within max_request_ms.");
    expired.sample({}, s.daemon.requests_expired_total);
    expired.append_to(out);
    Family limited("gpreempt_hints_rate_limited_total", "counter",
                   "begin/expect hints refused because their connection exceeded its hint rate.");
    limited.sample({}, s.daemon.hints_rate_limited_total);
    limited.append_to(out);
    Family refused("gpreempt_socket_connections_refused_total", "counter",
                   "Socket connections refused at accept, by reason.");
    refused.sample({{"reason", "per_uid_cap"}}, s.daemon.connections_refused_per_uid_cap_total);
    refused.sample({{"reason", "no_descriptor"}}, s.daemon.connections_refused_no_descriptor_total);
    refused.append_to(out);
    Family closed("gpreempt_socket_connections_closed_total", "counter",
                  "Socket connections gpreemptd closed, by reason (a peer that does not read its "
                  "replies, or sends nothing for idle_timeout_ms).");
    closed.sample({{"reason", "slow_reader"}}, s.daemon.connections_dropped_slow_reader_total);
    closed.sample({{"reason", "idle"}}, s.daemon.connections_closed_idle_total);
    closed.append_to(out);
  }

  // Per GPU.
  {
    Family can("gpreempt_gpu_can_suspend", "gauge",
               "1 when debug-trap suspend works on this GPU, 0 when gpreemptd falls back to queue "
               "priorities.");
    Family now("gpreempt_gpu_suspended_processes", "gauge",
               "Processes whose queues on this GPU are suspended now.");
    Family suspend_calls("gpreempt_suspend_calls_total", "counter",
                         "SUSPEND_QUEUES calls issued on this GPU (one per decision).");
    Family resume_calls("gpreempt_resume_calls_total", "counter",
                        "RESUME_QUEUES calls issued on this GPU.");
    Family failures("gpreempt_actuation_failures_total", "counter",
                    "Suspend or resume calls that failed: reason=\"error\" (an error return or "
                    "queues the kernel reported invalid) or reason=\"timeout\" (the scheduler's "
                    "preemption timed out, bit 30).");
    Family latency("gpreempt_suspend_latency_seconds", "histogram",
                   "Time from issuing SUSPEND_QUEUES on this GPU to its return, in seconds.");
    for (const GpuMetrics* g : sorted(s.gpus, [](const GpuMetrics& x) { return x.gpu_id; })) {
      const Labels l = gpu_labels(g->gpu_id);
      can.sample(l, std::uint64_t{g->can_suspend ? 1u : 0u});
      now.sample(l, g->suspended_processes);
      suspend_calls.sample(l, g->suspend_calls_total);
      resume_calls.sample(l, g->resume_calls_total);
      const std::string gpu = std::to_string(g->gpu_id);
      failures.sample({{"gpu", gpu}, {"action", "suspend"}, {"reason", "error"}}, g->suspend_failures_total);
      failures.sample({{"gpu", gpu}, {"action", "suspend"}, {"reason", "timeout"}}, g->suspend_timeouts_total);
      failures.sample({{"gpu", gpu}, {"action", "resume"}, {"reason", "error"}}, g->resume_failures_total);
      failures.sample({{"gpu", gpu}, {"action", "resume"}, {"reason", "timeout"}}, g->resume_timeouts_total);
      latency.histogram(l, g->suspend_latency_seconds);
    }
    for (const Family* f : {&can, &now, &suspend_calls, &resume_calls, &failures, &latency})
      f->append_to(out);
  }

  // Per class with an objective.
  {
    Family target("gpreempt_objective_target_seconds", "gauge",
                  "What the class's objective allows at its percentile ([[class]] slo), per "
                  "metric: latency (request), ttft (time to first token), tpot (time per output "
                  "token).");
    Family measured("gpreempt_objective_latency_seconds", "gauge",
                    "The class's measure (metric: latency, ttft, tpot) at the goal's percentile "
                    "over the objective's window.");
    Family action("gpreempt_objective_action", "gauge",
                  "1 for the protection serving the objective now (none, late, per_request, hold).");
    Family changes("gpreempt_objective_action_changes_total", "counter",
                   "Times the protection serving the objective changed.");
    std::set<std::string> classes_done;  // the action is the class's, whatever its goals
    for (const ObjectiveMetrics* o : sorted(s.objectives, [](const ObjectiveMetrics& x) {
           return std::tie(x.class_name);
         })) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%g", o->percentile);
      const Labels l{{"class", o->class_name}, {"metric", o->metric}, {"percentile", pct}};
      target.sample(l, o->target_seconds);
      if (o->latency_seconds) measured.sample(l, *o->latency_seconds);
      if (!classes_done.insert(o->class_name).second) continue;
      for (const char* a : {"none", "late", "per_request", "hold"})
        action.sample({{"class", o->class_name}, {"action", a}},
                      std::uint64_t{o->action == a ? 1u : 0u});
      changes.sample({{"class", o->class_name}}, o->action_changes_total);
    }
    for (const Family* f : {&target, &measured, &action, &changes}) f->append_to(out);
  }

  // Per GPU and class.
  {
    Family procs("gpreempt_class_processes", "gauge", "GPU processes of this class on this GPU now.");
    Family susp("gpreempt_suspensions_total", "counter",
                "Times a process of this class was suspended on this GPU.");
    Family secs("gpreempt_suspended_seconds_total", "counter",
                "Seconds processes of this class spent suspended on this GPU, summed over processes.");
    Family reqs("gpreempt_requests_total", "counter",
                "Online requests of this class finished on this GPU.");
    Family lat("gpreempt_request_latency_seconds", "histogram",
               "Online request latency (begin to end), in seconds.");
    for (const ClassMetrics* c : sorted(s.classes, [](const ClassMetrics& x) {
           return std::tie(x.gpu_id, x.class_name);
         })) {
      const Labels l = class_labels(c->gpu_id, c->class_name);
      procs.sample(l, c->processes);
      susp.sample(l, c->suspensions_total);
      secs.sample(l, c->suspended_seconds_total);
      reqs.sample(l, c->requests_total);
      lat.histogram(l, c->request_latency_seconds);
    }
    for (const Family* f : {&procs, &susp, &secs, &reqs, &lat}) f->append_to(out);
  }

  // Per process alive now.
  {
    Family susp("gpreempt_process_suspensions_total", "counter",
                "Times this process was suspended on this GPU.");
    Family secs("gpreempt_process_suspended_seconds_total", "counter",
                "Seconds this process spent suspended on this GPU.");
    Family reqs("gpreempt_process_requests_total", "counter",
                "Online requests of this process finished on this GPU.");
    for (const ProcessMetrics* p : sorted(s.processes, [](const ProcessMetrics& x) {
           return std::tie(x.gpu_id, x.class_name, x.pid);
         })) {
      const Labels l = process_labels(p->gpu_id, p->class_name, p->pid);
      susp.sample(l, p->suspensions_total);
      secs.sample(l, p->suspended_seconds_total);
      reqs.sample(l, p->requests_total);
    }
    for (const Family* f : {&susp, &secs, &reqs}) f->append_to(out);
  }
  return out;
}

}  // namespace gpreemptd
