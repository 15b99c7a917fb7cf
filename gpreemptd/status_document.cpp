#include "status_document.h"

#include <set>

#include "common/json_conventions.h"
#include "gpreempt/version.h"
#include "sched/priority_policy.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace jc = gpreempt::json_conventions;
using Json = nlohmann::ordered_json;

namespace {

double seconds_rounded(sched::Duration d) {
  return jc::round_to(std::chrono::duration<double>(d).count(), 6);
}

Json triggers_json(const sched::SchedClass& c) {
  Json t = Json::array();
  for (auto s : c.triggers) t.push_back(sched::to_string(s));
  return t;
}

Json usage_json(const sched::UsageStats& u) {
  return {{"suspensions", u.suspensions},
          {"forced_resumes", u.forced_resumes},
          {"failed_actuations", u.failed_actuations},
          {"timed_out_actuations", u.timed_out_actuations},
          {"suspended_s", seconds_rounded(u.suspended_time)},
          {"operator_suspensions", u.operator_suspensions},
          {"operator_suspended_s", seconds_rounded(u.operator_suspended_time)},
          {"requests_ignored", u.requests_ignored},
          {"requests_aborted", u.requests_aborted},
          {"request_latency_ms", latency_summary_json(u.request_latency)}};
}

}  // namespace

Json latency_summary_json(const sched::LatencyHistogram& h, bool micro) {
  auto conv = [micro](sched::Duration d) {
    const double ns = static_cast<double>(d.count());
    return micro ? jc::round_us(ns / 1e3) : jc::round_ms(ns / 1e6);
  };
  return {{"count", h.count()},
          {"p50", conv(h.percentile(0.5))},
          {"p99", conv(h.percentile(0.99))},
          {"max", conv(h.max())}};
}

// A class's objective and what serves it now (slo_controller.h); null without one. Its first goal
// (request latency, else TTFT, else TPOT) is also at the top level, as before TTFT/TPOT existed;
// `goals` lists each goal with its own measure.
static Json objective_json(const sched::Scheduler& scheduler, const sched::SchedClass& c, sched::Time now) {
  if (!c.objective) return Json();
  const auto& slo = scheduler.objectives();
  const auto& states = slo.states();
  auto it = states.find(c.name);
  auto ms = [](sched::Duration d) {
    return jc::round_to(std::chrono::duration<double, std::milli>(d).count(), 3);
  };
  Json goals = Json::array();
  for (const sched::Goal& g : c.objective->goals()) {
    const auto measured = slo.measured(c.name, g, now);
    goals.push_back({{"metric", to_string(g.metric)},
                     {"percentile", g.percentile},
                     {"target_ms", ms(g.target)},
                     {"measured_ms", measured ? Json(ms(*measured)) : Json()},
                     {"in_window", slo.count(c.name, g.metric, now)}});
  }
  const Json& first = goals.at(0);
  Json j = {{"metric", first["metric"]},
            {"percentile", first["percentile"]},
            {"target_ms", first["target_ms"]},
            {"window_s", std::chrono::duration<double>(c.objective->window).count()},
            {"measured_ms", first["measured_ms"]},
            {"action", to_string(slo.action(c.name))},
            {"goals", goals}};
  if (it != states.end()) {
    j["requests_in_window"] = it->second.samples.size();
    j["since_s_ago"] = jc::round_to(std::chrono::duration<double>(now - it->second.since).count(), 3);
    j["why"] = it->second.why;
    j["changes"] = it->second.changes;
  }
  return j;
}

Json status_document(const StatusSource& s) {
  Json daemon = {{"pid", s.pid},
                 {"version", GPREEMPT_VERSION_STRING},
                 {"config_path", s.config_path.empty() ? Json() : Json(s.config_path)},
                 {"socket_path", s.socket_path},
                 {"uptime_s", jc::round_to(s.uptime_s, 3)},
                 {"kfd_version", s.kfd_version.empty() ? Json() : Json(s.kfd_version)},
                 {"shutting_down", s.shutting_down},
                 // "own_processes": a peer that may not control the daemon sees its own only.
                 {"view", s.only_uid ? "own_processes" : "full"},
                 {"reloads", s.reloads},
                 {"failed_reloads", s.failed_reloads},
                 {"unknown_requests", s.figures->unknown_requests},
                 {"hint_to_suspend_us", latency_summary_json(*s.hint_to_suspend, true)}};
  Json notices = Json::object();
  for (const auto& [kind, n] : *s.notices) notices[kind] = n;
  daemon["core_notices"] = notices;

  Json classes = Json::array();
  const auto& class_stats = s.figures->classes;
  for (const auto& rule : s.config->classes) {
    const auto& c = rule.cls;
    Json cj = {{"name", c.name}, {"priority", c.priority}, {"triggers", triggers_json(c)}};
    if (!s.only_uid) {
      Json match = Json::array();
      for (const auto& m : rule.match) match.push_back(m.describe());
      cj["match"] = match;
    }
    cj["objective"] = objective_json(*s.scheduler, c, s.now);
    auto it = class_stats.find(c.name);
    cj["stats"] = usage_json(it == class_stats.end() ? sched::UsageStats{} : it->second);
    classes.push_back(cj);
  }

  std::set<sched::GpuId> ids;
  for (const auto& [id, r] : *s.gpus) ids.insert(id);
  for (auto id : s.scheduler->gpus()) ids.insert(id);
  Json gpus = Json::array();
  for (auto id : ids) {
    static const GpuRecord kNone;
    auto rit = s.gpus->find(id);
    const GpuRecord& rec = rit == s.gpus->end() ? kNone : rit->second;
    const sched::RuntimeSnapshot::Gpu& fig = s.figures->gpu(id);
    const sched::GpuArbiter* arb = s.scheduler->gpu(id);
    // The arbiter's view, not the process listing: what it believes suspended is what it resumes.
    int suspended_now = 0;
    if (arb)
      for (const auto& [key, m] : arb->members())
        if (m.state == sched::MemberState::kSuspended) ++suspended_now;
    Json procs = Json::array();
    for (const auto& [key, p] : s.processes->all()) {
      const sched::ProcessDescription& d = p.description;
      if (s.only_uid && d.uid != *s.only_uid) continue;
      const sched::GpuMember* m = nullptr;
      if (arb)
        if (auto mit = arb->members().find(p.key); mit != arb->members().end()) m = &mit->second;
      auto q = d.queues.find(id);
      if (!m && q == d.queues.end()) continue;
      std::string cmd;
      for (const auto& a : d.cmdline) cmd += (cmd.empty() ? "" : " ") + a;
      const bool suspended = m && m->state == sched::MemberState::kSuspended;
      procs.push_back(
          {{"pid", p.key.pid},
           {"start_time_ticks", p.key.start_time_ticks},
           {"class", p.class_name ? Json(*p.class_name) : Json()},
           {"class_rule", p.class_name ? Json(d.rule) : Json()},
           {"class_inherited_from",
            d.inherited_from ? Json{{"pid", d.inherited_from->pid},
                                    {"start_time_ticks", d.inherited_from->start_time_ticks}}
                             : Json()},
           {"cmdline", cmd},
           {"queues", q == d.queues.end() ? 0 : q->second},
           {"suspended", suspended},
           {"state", m ? sched::to_string(m->state) : "unmanaged"},
           {"open_requests", m ? m->active_requests : 0},
           // An operator hold in force: how long it still lasts (`ctl suspend`).
           {"operator_hold_s", m && sched::operator_held(*m, s.now)
                                   ? Json(seconds_rounded(*m->operator_until - s.now))
                                   : Json()}});
    }
    Json g = {{"gpu_id", id},
              {"name", rec.name.empty() ? Json() : Json(rec.name)},
              {"can_suspend", arb ? arb->can_suspend() : rec.can_suspend},
              {"reason", rec.can_suspend ? Json() : Json(rec.reason)},
              {"suspended_now", suspended_now > 0},
              {"suspended_processes", suspended_now},
              {"suspensions_total", fig.suspensions},
              {"suspended_s_total", seconds_rounded(fig.suspended)},
              {"grace_us",
               arb ? jc::round_us(static_cast<double>(arb->current_grace().count()) / 1e3)
                   : jc::round_us(static_cast<double>(s.scheduler->config().grace_default.count()) /
                                  1e3)},
              {"in_flight", arb ? arb->in_flight() : false},
              {"processes", procs},
              {"online_request_latency_ms", latency_summary_json(fig.requests.latency)}};
    if (arb) {
      const auto& st = fig.actions;
      g["actions"] = {{"suspend", st.suspend_actions},
                      {"resume", st.resume_actions},
                      {"failed_targets", st.failed_targets},
                      {"timed_out_targets", st.timed_out_targets},
                      {"stale_completions", st.stale_completions},
                      {"flaps", st.flaps}};
      g["coalesced_hysteresis_ms"] =
          jc::round_ms(static_cast<double>(arb->coalesced_hysteresis().count()) / 1e6);
    }
    if (rec.priority_only) {
      Json ranks = Json::array();
      for (const auto& [key, prio] : rec.priority_only->queue_priorities) {
        if (s.only_uid) {
          const sched::ProcessRecord* p = s.processes->with_pid(key.pid);
          if (!p || p->key != key || p->description.uid != *s.only_uid) continue;
        }
        ranks.push_back({{"pid", key.pid}, {"queue_priority", prio}});
      }
      g["priority_only"] = {{"reason", rec.priority_only->reason}, {"queue_priorities", ranks}};
    }
    gpus.push_back(g);
  }
  return jc::document(Json{{"daemon", daemon}, {"classes", classes}, {"gpus", gpus}});
}

}  // namespace gpreemptd
