#include "top_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <climits>
#include <map>
#include <sstream>

#include "cli.h"
#include "common/escape.h"

namespace gpreempt::cli {

namespace {

using Json = nlohmann::ordered_json;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}


std::optional<int64_t> int_at(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

std::optional<double> num_at(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string str_at(const Json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {  // a command line as its arguments
    std::string s;
    for (const auto& a : *it)
      if (a.is_string()) s += (s.empty() ? "" : " ") + a.get<std::string>();
    return s;
  }
  return {};
}

bool bool_at(const Json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

const Json* gpu_in(const Json* doc, uint32_t gpu_id) {
  if (!doc) return nullptr;
  for (const auto& g : array_at(*doc, "gpus"))
    if (int_at(g, "gpu_id") == static_cast<int64_t>(gpu_id)) return &g;
  return nullptr;
}

// The same daemon, still running: a restart resets every counter.
bool same_daemon(const Json& cur, const Json& prev) {
  const Json& dc = cur.is_object() && cur.contains("daemon") ? cur["daemon"] : Json();
  const Json& dp = prev.is_object() && prev.contains("daemon") ? prev["daemon"] : Json();
  if (int_at(dc, "pid") != int_at(dp, "pid")) return false;
  const auto uc = num_at(dc, "uptime_s"), up = num_at(dp, "uptime_s");
  return !(uc && up && *uc < *up);
}

}  // namespace

TopView compute_top_view(const Json& current, const Json* previous, double elapsed_s) {
  TopView v;
  const Json daemon = current.is_object() && current.contains("daemon") ? current["daemon"] : Json::object();
  v.daemon_version = str_at(daemon, "version");
  v.daemon_pid = int_at(daemon, "pid");
  v.uptime_s = num_at(daemon, "uptime_s");
  v.socket_path = str_at(daemon, "socket_path");
  const bool windowed = previous && elapsed_s > 0 && same_daemon(current, *previous);
  v.window_s = windowed ? elapsed_s : v.uptime_s.value_or(0);

  std::map<std::string, int64_t> priority;
  std::vector<std::string> configured;
  for (const auto& c : array_at(current, "classes")) {
    const std::string name = str_at(c, "name");
    configured.push_back(name);
    if (auto p = int_at(c, "priority")) priority[name] = *p;
    if (c.is_object() && c.contains("objective") && c["objective"].is_object()) {
      const Json& o = c["objective"];
      const auto window = num_at(o, "window_s");
      // One line per goal; a daemon before TTFT/TPOT sends only its one goal, at the top level.
      const Json goals = o.contains("goals") && o["goals"].is_array() ? o["goals"] : Json::array({o});
      for (const auto& g : goals) {
        TopObjective t;
        t.class_name = name;
        if (auto m = str_at(g, "metric"); !m.empty()) t.metric = m;
        const auto pct = num_at(g, "percentile");
        const auto target = num_at(g, "target_ms");
        t.objective = std::string(t.metric == "ttft" ? "TTFT " : t.metric == "tpot" ? "TPOT " : "") +
                      "p" + (pct ? fmt("%g", *pct) : std::string("?")) + " <= " +
                      (target ? fmt("%g", *target) : std::string("?")) + " ms over " +
                      (window ? fmt("%g", *window) : std::string("?")) + " s";
        t.measured_ms = num_at(g, "measured_ms");
        t.action = str_at(o, "action");
        t.since_s_ago = num_at(o, "since_s_ago");
        t.why = str_at(o, "why");
        v.objectives.push_back(std::move(t));
      }
    }
  }

  for (const auto& g : array_at(current, "gpus")) {
    TopGpu t;
    t.gpu_id = static_cast<uint32_t>(int_at(g, "gpu_id").value_or(0));
    t.can_suspend = bool_at(g, "can_suspend");
    t.reason = str_at(g, "reason");
    t.suspended_now = int_at(g, "suspended_now").value_or(0);
    t.grace_us = int_at(g, "grace_us");
    const Json latency = g.is_object() && g.contains("online_request_latency_ms")
                             ? g["online_request_latency_ms"]
                             : Json::object();
    t.requests = int_at(latency, "count").value_or(0);
    t.p50_ms = num_at(latency, "p50");
    t.p99_ms = num_at(latency, "p99");

    const auto susp = num_at(g, "suspensions_total");
    const auto secs = num_at(g, "suspended_s_total");
    const Json* pg = windowed ? gpu_in(previous, t.gpu_id) : nullptr;
    const auto psusp = pg ? num_at(*pg, "suspensions_total") : std::nullopt;
    const auto psecs = pg ? num_at(*pg, "suspended_s_total") : std::nullopt;
    auto clamp01 = [](double x) { return std::min(1.0, std::max(0.0, x)); };
    if (pg && susp && psusp && secs && psecs && *susp >= *psusp && *secs >= *psecs) {
      t.since_start = false;
      t.suspensions_per_s = (*susp - *psusp) / elapsed_s;
      t.offline_progress = clamp01(1.0 - (*secs - *psecs) / elapsed_s);
    } else if (v.uptime_s && *v.uptime_s > 0) {
      t.since_start = true;
      if (susp) t.suspensions_per_s = *susp / *v.uptime_s;
      if (secs) t.offline_progress = clamp01(1.0 - *secs / *v.uptime_s);
    }

    std::map<std::string, TopClassRow> rows;
    for (const auto& name : configured) rows[name].name = name;
    for (const auto& p : array_at(g, "processes")) {
      TopProcessRow r;
      r.pid = int_at(p, "pid").value_or(0);
      r.class_name = str_at(p, "class");
      r.queues = int_at(p, "queues").value_or(0);
      r.suspended = bool_at(p, "suspended");
      r.open_requests = int_at(p, "open_requests").value_or(0);
      r.cmdline = str_at(p, "cmdline");
      auto& row = rows[r.class_name];
      row.name = r.class_name;
      ++row.processes;
      row.suspended += r.suspended ? 1 : 0;
      row.open_requests += r.open_requests;
      t.processes.push_back(std::move(r));
    }
    for (auto& [name, row] : rows) {
      if (auto it = priority.find(name); it != priority.end() && !name.empty()) row.priority = it->second;
      t.classes.push_back(row);
    }
    // Highest priority first; unmatched processes ("" / no priority) last.
    std::stable_sort(t.classes.begin(), t.classes.end(), [](const TopClassRow& a, const TopClassRow& b) {
      if (a.priority.has_value() != b.priority.has_value()) return a.priority.has_value();
      return a.priority.value_or(0) > b.priority.value_or(0);
    });
    std::stable_sort(t.processes.begin(), t.processes.end(), [&](const TopProcessRow& a, const TopProcessRow& b) {
      auto pa = priority.find(a.class_name), pb = priority.find(b.class_name);
      const int64_t ka = pa == priority.end() ? INT64_MIN : pa->second;
      const int64_t kb = pb == priority.end() ? INT64_MIN : pb->second;
      if (ka != kb) return ka > kb;
      return a.pid < b.pid;
    });
    v.gpus.push_back(std::move(t));
  }
  std::sort(v.gpus.begin(), v.gpus.end(), [](const TopGpu& a, const TopGpu& b) { return a.gpu_id < b.gpu_id; });
  return v;
}

// ---- text ------------------------------------------------------------------------------------

namespace {

constexpr const char* kBold = "\033[1m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kReset = "\033[0m";

std::string duration_text(double s) {
  const auto total = static_cast<int64_t>(s);
  char buf[32];
  if (total < 60) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(total));
  else if (total < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(total / 60), static_cast<long long>(total % 60));
  else if (total < 86400) std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(total / 3600), static_cast<long long>(total / 60 % 60));
  else std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(total / 86400), static_cast<long long>(total / 3600 % 24));
  return buf;
}

struct Line {
  std::string text;
  const char* sgr = nullptr;  // whole-line colour, only with style.color
};

void table_lines(std::vector<Line>& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, const std::vector<const char*>& colours) {
  std::istringstream t(table(header, rows));
  std::size_t i = 0;
  for (std::string line; std::getline(t, line); ++i)
    out.push_back({"  " + line, i == 0 ? nullptr : colours[i - 1]});
}

}  // namespace

std::string render_top(const TopView& v, const TopStyle& style) {
  std::vector<Line> lines;
  bool few_requests = false;
  {
    std::string h = "gpreemptd " + (v.daemon_version.empty() ? std::string("?") : v.daemon_version);
    if (v.daemon_pid) h += "  pid " + std::to_string(*v.daemon_pid);
    if (v.uptime_s) h += "  up " + duration_text(*v.uptime_s);
    if (!v.socket_path.empty()) h += "  socket " + v.socket_path;
    lines.push_back({h, kBold});
  }
  for (const auto& o : v.objectives) {
    std::string l = "objective " + o.class_name + ": " + o.objective + "  measured " +
                    (o.measured_ms ? fmt("%.2f ms", *o.measured_ms) : std::string("-")) + "  action " +
                    (o.action.empty() ? std::string("?") : o.action);
    if (o.since_s_ago) l += " for " + duration_text(*o.since_s_ago);
    if (!o.why.empty()) l += " (" + o.why + ")";
    lines.push_back({l});
  }
  if (v.gpus.empty()) lines.push_back({"no GPUs"});
  for (const auto& g : v.gpus) {
    lines.push_back({""});
    std::string h = "GPU " + gpu_id_text(g.gpu_id) + "  ";
    h += g.can_suspend ? "can suspend" : "cannot suspend: " + (g.reason.empty() ? std::string("?") : g.reason);
    if (g.grace_us) h += "  grace " + std::to_string(*g.grace_us) + " us";
    h += "  suspended now " + std::to_string(g.suspended_now);
    lines.push_back({h, g.can_suspend ? kBold : kRed});

    std::string r = "  suspensions/s " + (g.suspensions_per_s ? fmt("%.1f", *g.suspensions_per_s) : "-");
    r += "  offline progress " + (g.offline_progress ? fmt("%.1f %%", *g.offline_progress * 100) : "-");
    r += g.since_start ? "  (since start)" : "  (last " + fmt("%.1f", v.window_s) + " s)";
    lines.push_back({r});
    std::string l = "  online requests " + std::to_string(g.requests);
    if (g.requests > 0) {
      l += ": p50 " + (g.p50_ms ? fmt("%.2f", *g.p50_ms) + " ms" : "-");
      l += "  p99 " + (g.p99_ms ? fmt("%.2f", *g.p99_ms) + " ms" : "-");
      if (g.requests < 1000) {
        l += "*";
        few_requests = true;
      }
    }
    lines.push_back({l});

    std::vector<std::vector<std::string>> class_rows;
    std::vector<const char*> class_colours;
    for (const auto& c : g.classes) {
      class_rows.push_back({c.name.empty() ? "(none)" : c.name, c.priority ? std::to_string(*c.priority) : "-",
                            std::to_string(c.processes), std::to_string(c.suspended),
                            std::to_string(c.open_requests)});
      class_colours.push_back(c.suspended > 0 ? kYellow : nullptr);
    }
    if (!class_rows.empty())
      table_lines(lines, {"CLASS", "PRIO", "PROCS", "SUSPENDED", "OPEN_REQ"}, class_rows, class_colours);
    std::vector<std::vector<std::string>> proc_rows;
    std::vector<const char*> proc_colours;
    for (const auto& p : g.processes) {
      proc_rows.push_back({std::to_string(p.pid), p.class_name.empty() ? "(none)" : p.class_name,
                           std::to_string(p.queues), p.suspended ? "yes" : "no",
                           std::to_string(p.open_requests), gpreempt::printable(p.cmdline)});
      proc_colours.push_back(p.suspended ? kYellow : nullptr);
    }
    if (proc_rows.empty())
      lines.push_back({"  no GPU processes"});
    else
      table_lines(lines, {"PID", "CLASS", "QUEUES", "SUSPENDED", "OPEN_REQ", "COMMAND"}, proc_rows, proc_colours);
  }
  if (few_requests) {
    lines.push_back({""});
    lines.push_back({"* fewer than 1000 requests: the p99 is about the maximum"});
  }

  if (style.height > 0 && lines.size() > static_cast<std::size_t>(style.height)) {
    const std::size_t keep = static_cast<std::size_t>(std::max(style.height - 1, 0));
    const std::size_t cut = lines.size() - keep;
    lines.resize(keep);
    lines.push_back({"... " + std::to_string(cut) + " more line(s): enlarge the terminal or use --once"});
  }
  std::string out;
  for (auto& line : lines) {
    if (style.width > 0 && line.text.size() > static_cast<std::size_t>(style.width))
      line.text.resize(static_cast<std::size_t>(style.width));
    if (style.color && line.sgr)
      out += line.sgr + line.text + kReset + "\n";
    else
      out += line.text + "\n";
  }
  return out;
}

Json top_view_json(const TopView& v) {
  auto opt = [](const auto& o) { return o ? Json(*o) : Json(); };
  Json j;
  j["daemon"] = {{"version", v.daemon_version}, {"pid", opt(v.daemon_pid)}, {"uptime_s", opt(v.uptime_s)},
                 {"socket_path", v.socket_path}};
  j["window_s"] = json_conventions::round_to(v.window_s, 3);
  j["objectives"] = Json::array();
  for (const auto& o : v.objectives)
    j["objectives"].push_back({{"class", o.class_name},
                               {"metric", o.metric},
                               {"objective", o.objective},
                               {"measured_ms", opt(o.measured_ms)},
                               {"action", o.action},
                               {"since_s_ago", opt(o.since_s_ago)},
                               {"why", o.why}});
  j["gpus"] = Json::array();
  for (const auto& g : v.gpus) {
    Json gj;
    gj["gpu_id"] = g.gpu_id;
    gj["can_suspend"] = g.can_suspend;
    gj["reason"] = g.reason.empty() ? Json() : Json(g.reason);
    gj["suspended_now"] = g.suspended_now;
    gj["grace_us"] = opt(g.grace_us);
    gj["rates_since_start"] = g.since_start;
    gj["suspensions_per_s"] = g.suspensions_per_s ? Json(json_conventions::round_to(*g.suspensions_per_s, 3)) : Json();
    gj["offline_progress"] = g.offline_progress ? Json(json_conventions::round_to(*g.offline_progress, 4)) : Json();
    gj["online_requests"] = g.requests;
    gj["online_request_latency_ms"] = {{"p50", opt(g.p50_ms)}, {"p99", opt(g.p99_ms)}};
    gj["classes"] = Json::array();
    for (const auto& c : g.classes)
      gj["classes"].push_back({{"name", c.name.empty() ? Json() : Json(c.name)},
                               {"priority", opt(c.priority)},
                               {"processes", c.processes},
                               {"suspended", c.suspended},
                               {"open_requests", c.open_requests}});
    gj["processes"] = Json::array();
    for (const auto& p : g.processes)
      gj["processes"].push_back({{"pid", p.pid},
                                 {"class", p.class_name.empty() ? Json() : Json(p.class_name)},
                                 {"queues", p.queues},
                                 {"suspended", p.suspended},
                                 {"open_requests", p.open_requests},
                                 {"cmdline", p.cmdline}});
    j["gpus"].push_back(std::move(gj));
  }
  return j;
}

}  // namespace gpreempt::cli
