// `gpreempt ctl`: the operator's side of gpreemptd over its socket (client::Connection) — the
// status of every GPU, and suspend / resume / reload (the *operator* trigger). The daemon decides
// who may change state; a refusal is printed with the daemon's own reason (exit 1).
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <regex>
#include <sstream>

#include "cli.h"
#include "common/escape.h"
#include "client/connection.h"
#include "common/error.h"

namespace gpreempt::cli {

namespace {

using Json = nlohmann::ordered_json;

struct CtlOptions {
  std::string socket;  // empty: $GPREEMPT_SOCKET, else the default
  uint32_t timeout_ms = static_cast<uint32_t>(client::kDefaultCallTimeout.count());
  std::optional<std::string> class_name;
  std::optional<int> pid;
  std::optional<std::string> gpu;
  std::string duration;
};

const char* kSocketHelp = "gpreemptd's socket (default: $GPREEMPT_SOCKET, else /run/gpreempt/gpreemptd.sock)";

void add_connection_options(CLI::App* sub, CtlOptions& o) {
  sub->add_option("--socket", o.socket, kSocketHelp);
  sub->add_option("--timeout-ms", o.timeout_ms, "How long to wait for the daemon (default 5000)")
      ->check(CLI::Range(1u, 3600u * 1000u));
}

void add_target_options(CLI::App* sub, CtlOptions& o) {
  sub->add_option("--class", o.class_name, "A class of the daemon's config (e.g. offline)");
  sub->add_option("--pid", o.pid, "One process (a pid as the host sees it)")->check(CLI::PositiveNumber);
  sub->add_option("--gpu", o.gpu, "Only on this GPU (KFD gpu_id, decimal or 0x-hex; default every GPU)");
}

client::Connection connect(const CtlOptions& o) {
  return client::Connection::connect(o.socket, std::chrono::milliseconds(o.timeout_ms));
}

// The duration of `--for`: a number with a unit (us, ms, s), in whole milliseconds, rounded up so
// that a short request is never turned into no suspension at all.
int64_t parse_duration_ms(const std::string& text) {
  static const std::regex re(R"(^([0-9]+(\.[0-9]+)?)(us|ms|s)$)");
  std::smatch m;
  if (!std::regex_match(text, m, re)) {
    throw UsageError("--for " + text + ": expected a duration with a unit, e.g. 500ms, 2s, 1500us");
  }
  const double value = std::stod(m[1].str());
  const std::string unit = m[3].str();
  const double ms = unit == "s" ? value * 1000.0 : unit == "ms" ? value : value / 1000.0;
  if (ms <= 0) throw UsageError("--for " + text + ": the duration must be positive");
  if (ms > 24.0 * 3600 * 1000) throw UsageError("--for " + text + ": longer than a day");
  return static_cast<int64_t>(std::ceil(ms));
}

client::Target target_of(const CtlOptions& o) {
  if (o.class_name.has_value() == o.pid.has_value()) {
    throw UsageError("give exactly one of --class CLASS and --pid PID");
  }
  client::Target t;
  t.class_name = o.class_name;
  t.pid = o.pid;
  if (o.gpu) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(*o.gpu, &used, 0);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != o.gpu->size() || v > 0xffffffffull) {
      throw UsageError("--gpu " + *o.gpu + ": expected a KFD gpu_id (e.g. 63420 or 0xf7bc)");
    }
    t.gpu_id = static_cast<uint32_t>(v);
  }
  return t;
}

std::string target_text(const client::Target& t) {
  std::string s = t.class_name ? "class " + *t.class_name : "pid " + std::to_string(*t.pid);
  if (t.gpu_id) s += " on GPU " + gpu_id_text(*t.gpu_id);
  return s;
}

Json target_json(const client::Target& t) {
  Json j;
  j["class"] = t.class_name ? Json(*t.class_name) : Json(nullptr);
  j["pid"] = t.pid ? Json(*t.pid) : Json(nullptr);
  // Absent, not null, when no GPU was named: the command applied to every GPU.
  if (t.gpu_id) j["gpu_id"] = *t.gpu_id;
  return j;
}

// ---- status rendering ----------------------------------------------------------------------------

// Values of the status document as text; a missing or null value is "-".
std::string text(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  if (it->is_number_float()) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(3) << it->get<double>();
    return s.str();
  }
  return it->dump();
}

std::string render_status(const Json& doc) {
  std::ostringstream out;
  const Json daemon = doc.value("daemon", Json::object());
  out << "gpreemptd " << text(daemon, "version") << "  pid " << text(daemon, "pid") << "  up "
      << text(daemon, "uptime_s") << " s\n"
      << "  config " << text(daemon, "config_path") << "\n"
      << "  socket " << text(daemon, "socket_path") << "\n";
  if (text(daemon, "policy") == "none")
    out << "  policy none: observing only, no request or time slice suspends anything\n";
  if (text(daemon, "view") == "own_processes")
    out << "  (your own processes only: root and [daemon] control_group see every process)\n";
  out << "\n";

  std::vector<std::vector<std::string>> class_rows;
  for (const auto& c : array_at(doc, "classes")) {
    std::string triggers;
    for (const auto& t : array_at(c, "triggers")) {
      triggers += (triggers.empty() ? "" : ",") + (t.is_string() ? t.get<std::string>() : t.dump());
    }
    std::string objective = "-", action = "-";
    if (c.contains("objective") && c["objective"].is_object()) {
      const Json& o = c["objective"];
      // Each goal (request latency, TTFT, TPOT); a daemon before TTFT/TPOT sends only the first.
      Json goals = o.contains("goals") && o["goals"].is_array() ? o["goals"] : Json::array({o});
      // A percentile and a target as written in the config (p99.9, 500), not to 3 decimals.
      auto written = [](const Json& j, const char* key) {
        auto it = j.find(key);
        if (it == j.end() || !it->is_number()) return text(j, key);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", it->get<double>());
        return std::string(buf);
      };
      objective.clear();
      for (const auto& g : goals) {
        const std::string metric = g.contains("metric") ? text(g, "metric") : "latency";
        objective += (objective.empty() ? "" : ", ") +
                     (metric == "ttft" ? std::string("TTFT ") : metric == "tpot" ? "TPOT " : "") +
                     "p" + written(g, "percentile") + " <= " + written(g, "target_ms") +
                     " ms (measured " + text(g, "measured_ms") + ")";
      }
      objective += " / " + text(o, "window_s") + " s";
      action = text(o, "action") + " for " + text(o, "since_s_ago") + " s";
    }
    class_rows.push_back(
        {text(c, "name"), text(c, "priority"), triggers.empty() ? "-" : triggers, objective, action});
  }
  if (class_rows.empty()) {
    out << "No classes configured.\n";
  } else {
    out << table({"CLASS", "PRIORITY", "TRIGGERS", "OBJECTIVE", "ACTION"}, class_rows);
  }

  const Json& gpus = array_at(doc, "gpus");
  if (gpus.empty()) out << "\nNo GPUs.\n";
  for (const auto& g : gpus) {
    const std::string id = g.contains("gpu_id") && g["gpu_id"].is_number_unsigned()
                               ? gpu_id_text(g["gpu_id"].get<uint32_t>())
                               : text(g, "gpu_id");
    out << "\nGPU " << id << ": ";
    if (g.value("can_suspend", false)) {
      out << "can suspend";
    } else {
      out << "cannot suspend (" << text(g, "reason") << ")";
    }
    out << "; suspended now: " << text(g, "suspended_now") << "\n";
    out << "  suspensions " << text(g, "suspensions_total") << ", suspended " << text(g, "suspended_s_total")
        << " s in total, grace " << text(g, "grace_us") << " us\n";
    const Json latency = g.value("online_request_latency_ms", Json::object());
    out << "  online requests " << text(latency, "count") << ", latency p50 " << text(latency, "p50")
        << " ms, p99 " << text(latency, "p99") << " ms\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : array_at(g, "processes")) {
      const std::string hold = text(p, "operator_hold_s");
      rows.push_back({text(p, "pid"), text(p, "class"), text(p, "queues"), text(p, "suspended"),
                      text(p, "open_requests"), hold == "-" ? hold : hold + " s",
                      gpreempt::printable(text(p, "cmdline"))});
    }
    if (rows.empty()) {
      out << "  no GPU processes\n";
    } else {
      std::istringstream t(table({"PID", "CLASS", "QUEUES", "SUSPENDED", "OPEN_REQUESTS", "OPERATOR", "COMMAND"},
                                       rows));
      for (std::string line; std::getline(t, line);) out << "  " << line << "\n";
    }
  }
  return out.str();
}

// ---- commands --------------------------------------------------------------------------------------

void run_status(const Globals& g, const CtlOptions& o) {
  auto c = connect(o);
  const Json doc = c.status();
  if (g.json) {
    print_json(doc);
  } else {
    std::cout << render_status(doc);
  }
}

// The one document of suspend / resume / reload: what was asked and what the daemon answered.
void report(const Globals& g, const std::string& op, const std::optional<client::Target>& target,
            std::optional<int64_t> for_ms, const Json& result, const std::string& human) {
  Json j;
  j["op"] = op;
  if (target) j["target"] = target_json(*target);
  if (for_ms) j["for_ms"] = *for_ms;
  j["result"] = result;
  std::string text = human;
  for (auto it = result.begin(); it != result.end(); ++it) {
    text += "\n  " + it.key() + ": " + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  emit(g, text, j);
}

void run_suspend(const Globals& g, const CtlOptions& o) {
  const auto target = target_of(o);
  const int64_t for_ms = parse_duration_ms(o.duration);
  auto c = connect(o);
  const Json r = c.suspend(target, for_ms);
  report(g, "suspend", target, for_ms, r,
         "gpreemptd suspended " + target_text(target) + " for " + std::to_string(for_ms) + " ms");
}

void run_resume(const Globals& g, const CtlOptions& o) {
  const auto target = target_of(o);
  auto c = connect(o);
  const Json r = c.resume(target);
  report(g, "resume", target, std::nullopt, r, "gpreemptd resumed " + target_text(target));
}

void run_reload(const Globals& g, const CtlOptions& o) {
  auto c = connect(o);
  const Json r = c.reload();
  report(g, "reload", std::nullopt, std::nullopt, r, "gpreemptd reloaded its config");
}

}  // namespace

void register_ctl_commands(CLI::App& app, Globals& globals) {
  auto* ctl = app.add_subcommand("ctl", "Talk to gpreemptd, the scheduler daemon: status, and "
                                        "operator suspend / resume / reload");
  ctl->require_subcommand(1);
  ctl->footer(
      "The daemon identifies you by your credentials on its socket: anyone may read the status;\n"
      "suspend, resume and reload need root or the daemon's configured group, and a refusal\n"
      "prints the daemon's reason (exit 1). The protocol is in docs/protocol.md.\n");
  auto o = std::make_shared<CtlOptions>();

  auto* status = add_command(*ctl, globals, "status", "Per GPU: classes, processes, queues, suspended now, counts",
                             "Examples:\n  gpreempt ctl status\n  gpreempt ctl status --json | jq '.gpus[].suspended_now'\n");
  add_connection_options(status, *o);
  status->callback([&globals, o] { run_status(globals, *o); });

  auto* suspend = add_command(*ctl, globals, "suspend",
                              "Suspend a class or a process for a while (the operator trigger)",
                              "Exactly one of --class and --pid. --for takes a unit: us, ms or s\n"
                              "(rounded up to whole ms); the daemon still applies its hard bound.\n"
                              "Examples:\n  gpreempt ctl suspend --class offline --for 500ms\n"
                              "  gpreempt ctl suspend --pid 4242 --gpu 0xf7bc --for 2s\n");
  add_target_options(suspend, *o);
  suspend->add_option("--for", o->duration, "How long, with a unit: 500ms, 2s, 1500us")->required();
  add_connection_options(suspend, *o);
  suspend->callback([&globals, o] { run_suspend(globals, *o); });

  auto* resume = add_command(*ctl, globals, "resume", "End an operator suspension now",
                             "Examples:\n  gpreempt ctl resume --class offline\n  gpreempt ctl resume --pid 4242\n");
  add_target_options(resume, *o);
  add_connection_options(resume, *o);
  resume->callback([&globals, o] { run_resume(globals, *o); });

  auto* reload = add_command(*ctl, globals, "reload",
                             "Make gpreemptd re-read its config (as SIGHUP); an invalid config is "
                             "refused and the running one kept");
  add_connection_options(reload, *o);
  reload->callback([&globals, o] { run_reload(globals, *o); });
}

}  // namespace gpreempt::cli
