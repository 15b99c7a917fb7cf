#include "demo/demo_report.h"

#include <functional>
#include <sstream>
#include <utility>

#include "cli.h"
#include "common/latency_summary.h"

namespace gpreempt::demo {

namespace {

nlohmann::json percentiles_ms(const std::vector<double>& v) {
  return to_json(summarize(v));
}

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(digits);
  o << v;
  return o.str();
}

// The online side's figures. An LLM server (gpreempt.sim.serve) reports per request TTFT, TPOT
// and its end-to-end latency, which is the request's latency as the other workloads measure it
// (arrival to the last result).
void online_json(nlohmann::json& j, const nlohmann::json& on) {
  if (on.contains("ttft_ms")) {
    j["online_latency_ms"] = on["e2e_ms"];
    j["online_requests"] = on["completed"];
    j["online_ttft_ms"] = on["ttft_ms"];
    j["online_tpot_ms"] = on["tpot_ms"];
    j["online_output_tokens_per_s"] = on["output_tokens_per_s"];
    j["online_slo_attainment"] = on["slo_attainment"];
    j["online_objectives_ms"] = on["objectives"];
    return;
  }
  j["online_latency_ms"] = on["latency_ms"];
  j["online_requests"] = on["requests_completed"];
}

// One column of the human table: its header and its cell of a scenario ("-" where it has none).
struct Column {
  std::string header;
  std::function<std::string(const nlohmann::json&)> cell;
};

std::function<std::string(const nlohmann::json&)> number(const std::string& key, int digits,
                                                         const char* sub = nullptr) {
  return [key, digits, sub = std::string(sub ? sub : "")](const nlohmann::json& s) {
    if (!s.contains(key)) return std::string("-");
    const auto& v = sub.empty() ? s[key] : s[key][sub];
    return fixed(v.get<double>(), digits);
  };
}

bool any_has(const nlohmann::json& scenarios, const char* key) {
  for (const auto& s : scenarios)
    if (s.contains(key)) return true;
  return false;
}

std::vector<Column> columns(const nlohmann::json& scenarios) {
  std::vector<Column> c{
      {"scenario", [](const nlohmann::json& s) { return s["name"].get<std::string>(); }}};
  if (any_has(scenarios, "online_ttft_ms")) {
    c.push_back({"TTFT P50 ms", number("online_ttft_ms", 1, "p50")});
    c.push_back({"P99 ms", number("online_ttft_ms", 1, "p99")});
    c.push_back({"TPOT P50 ms", number("online_tpot_ms", 2, "p50")});
    c.push_back({"P99 ms", number("online_tpot_ms", 2, "p99")});
    c.push_back({"out tok/s", number("online_output_tokens_per_s", 1)});
    c.push_back({"SLO met", [](const nlohmann::json& s) {
                   return s.contains("online_slo_attainment")
                              ? fixed(100 * s["online_slo_attainment"].get<double>(), 1) + " %"
                              : std::string("-");
                 }});
  } else {
    for (const auto& [header, k] : {std::pair<const char*, const char*>{"online P50 ms", "p50"},
                                    {"P95 ms", "p95"},
                                    {"P99 ms", "p99"}})
      c.push_back({header, number("online_latency_ms", 2, k)});
  }
  // A fine-tuning step takes a fraction of a second: its rate needs a second decimal.
  const bool llm_offline = any_has(scenarios, "offline_tokens_per_s");
  c.push_back({"offline it/s", number("offline_iterations_per_s", llm_offline ? 2 : 1)});
  if (llm_offline) c.push_back({"offline tok/s", number("offline_tokens_per_s", 0)});
  c.push_back({"suspensions", [](const nlohmann::json& s) {
                 if (s.contains("gpreemptd"))
                   return std::to_string(s["gpreemptd"]["suspensions"].get<uint64_t>());
                 if (s.contains("simulated_suspends") && !s["simulated_suspends"].is_null())
                   return std::to_string(s["simulated_suspends"].get<uint64_t>());
                 return std::string("-");
               }});
  c.push_back({"suspend P50/P99 ms", [](const nlohmann::json& s) {
                 if (!s.contains("gpreemptd")) return std::string("-");
                 const auto& l = s["gpreemptd"]["suspend_ms"];
                 return !l.is_null() && l["count"].get<uint64_t>() > 0
                            ? fixed(l["p50"].get<double>(), 3) + " / " +
                                  fixed(l["p99"].get<double>(), 3)
                            : std::string("-");
               }});
  return c;
}

}  // namespace

nlohmann::json scenario_json(const ScenarioResult& s) {
  nlohmann::json j{{"name", s.name}};
  if (s.online) online_json(j, *s.online);
  if (s.offline) {
    j["offline_iterations_per_s"] = (*s.offline)["iterations_per_s"];
    // An LLM fine-tuning job's training tokens/s (gpreempt.sim.finetune).
    if (s.offline->contains("tokens_per_s"))
      j["offline_tokens_per_s"] = (*s.offline)["tokens_per_s"];
  }
  if (s.online && s.offline)
    j["simulated_suspends"] =
        s.simulated_suspends ? nlohmann::json(*s.simulated_suspends) : nlohmann::json();
  if (s.daemon) {
    const auto& d = *s.daemon;
    j["gpreemptd"] = {
        {"trigger", d.trigger},
        {"exit_code", d.exit_code},
        {"suspensions", d.suspensions},
        {"suspended_s", d.suspended_s},
        {"suspend_actions", d.suspend_actions},
        {"failed_targets", d.failed_targets},
        {"timed_out_targets", d.timed_out_targets},
        {"requests_expired", d.requests_expired},
        {"hint_to_suspend_us", d.hint_to_suspend_us},
        {"online_class", d.online_class},
        {"suspend_ms", d.suspend_ms ? percentiles_ms(*d.suspend_ms) : nlohmann::json()}};
  }
  return j;
}

std::string human_report(const nlohmann::json& j) {
  std::ostringstream out;
  out << "gpreempt demo on " << j["machine"]["description"].get<std::string>() << "\n"
      << "online: " << j["online_preset"].get<std::string>() << " at "
      << fixed(j["rate_hz"].get<double>(), 1) << " req/s"
      << ", offline: " << j["offline_preset"].get<std::string>() << ", "
      << j["requests"].get<uint64_t>() << " online requests ("
      << fixed(j["duration_s"].get<double>(), 1) << " s) per scenario\n\n";
  const auto& scenarios = j["scenarios"];
  const auto cols = columns(scenarios);
  std::vector<std::string> header;
  for (const auto& c : cols) header.push_back(c.header);
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : scenarios) {
    std::vector<std::string> r;
    for (const auto& c : cols) r.push_back(c.cell(s));
    rows.push_back(r);
  }
  out << cli::table(header, rows) << "\n";
  for (const auto& s : scenarios) {
    if (!s.contains("online_objectives_ms")) continue;
    const auto& o = s["online_objectives_ms"];
    out << "SLO met: the share of requests with TTFT <= " << fixed(o["ttft_ms"].get<double>(), 0)
        << " ms and TPOT <= " << fixed(o["tpot_ms"].get<double>(), 0)
        << " ms (gpreempt.sim.serve's objectives)\n";
    break;
  }
  bool any = false;
  for (const auto& s : scenarios) {
    if (!s.contains("gpreemptd")) continue;
    if (!any) out << "gpreemptd (one child per scenario, config written by the demo):\n";
    any = true;
    const auto& d = s["gpreemptd"];
    const auto& h = d["hint_to_suspend_us"];
    out << "  " << s["name"].get<std::string>() << ": trigger " << d["trigger"].get<std::string>()
        << ", offline suspended " << fixed(d["suspended_s"].get<double>(), 2) << " s";
    if (h["count"].get<uint64_t>() > 0)
      out << ", hint to SUSPEND p50 " << fixed(h["p50"].get<double>(), 1) << " us p99 "
          << fixed(h["p99"].get<double>(), 1) << " us";
    out << ", exit code " << d["exit_code"].get<int>() << "\n";
  }
  if (any)
    out << "suspend P50/P99: "
        << (j["machine"]["simulated"].get<bool>()
                ? "the simulated GPU's time from SUSPEND requested to the queues stopped"
                : "not measured on real hardware (see gpreemptd's metrics)")
        << "\n";
  return out.str();
}

}  // namespace gpreempt::demo
