// [[class]] of gpreemptd's config: each class's name, priority, match rules, triggers and
// objective, and which classes may preempt by what they match (class_trust.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sched/class_trust.h"
#include "sched/config_loader.h"

namespace gpreempt::sched::config_loading {

using namespace std::chrono_literals;

std::optional<Glob> Loader::glob(const toml::key& k, const toml::node& v) {
  auto s = string(k, v);
  if (!s) return std::nullopt;
  std::string why;
  auto g = Glob::parse(*s, &why);
  if (!g)
    error(line_of(k), "bad glob in '" + std::string(k.str()) + "' (\"" + *s + "\"): " + why);
  return g;
}

std::vector<ClassRule> Loader::classes(const toml::key& k, const toml::node& v) {
  std::vector<ClassRule> out;
  const toml::array* a = v.as_array();
  if (!a || !a->is_array_of_tables()) {
    error(line_of(k), "'class' must be an array of tables: write each class as [[class]]");
    return out;
  }
  std::set<std::string> names;
  std::map<std::size_t, int> slo_lines;  // class index -> line of its slo
  for (const auto& n : *a) {
    const toml::table& t = *n.as_table();
    ClassRule r;
    bool have_name = false, have_priority = false, have_match = false;
    for (auto&& [ck, cv] : t) {
      if (ck == "name") {
        have_name = true;
        if (auto s = string(ck, cv)) {
          r.cls.name = *s;
          if (!names.insert(*s).second) error(line_of(ck), "duplicate class name '" + *s + "'");
        }
      } else if (ck == "priority") {
        have_priority = true;
        if (auto p = integer(ck, cv)) {
          if (*p < SchedClass::kMinPriority || *p > SchedClass::kMaxPriority)
            error(line_of(ck), "priority " + std::to_string(*p) + " out of range (" +
                                   std::to_string(SchedClass::kMinPriority) + " to " +
                                   std::to_string(SchedClass::kMaxPriority) + ")");
          else
            r.cls.priority = static_cast<int>(*p);
        }
      } else if (ck == "match") {
        have_match = true;
        match(ck, cv, r.match);
      } else if (ck == "trigger") {
        trigger(ck, cv, r.cls.triggers);
      } else if (ck == "slo") {
        r.cls.objective = objective(ck, cv);
        if (r.cls.objective) slo_lines[out.size()] = line_of(ck);
      } else {
        error(line_of(ck), "unknown key '" + std::string(ck.str()) +
                               "' in [[class]] (expected name, priority, match, trigger, slo)");
      }
    }
    const int line = line_of(t);
    if (!have_name) error(line, "[[class]] without a name");
    if (!have_priority) error(line, "class '" + r.cls.name + "' has no priority");
    if (!have_match) error(line, "class '" + r.cls.name + "' has no match rule");
    out.push_back(std::move(r));
    class_match_lines_.push_back(std::move(current_match_lines_));
    current_match_lines_.clear();
  }
  // An objective is served by preempting lower classes: the lowest has none below it.
  int lowest = SchedClass::kMaxPriority + 1;
  for (const auto& r : out) lowest = std::min(lowest, r.cls.priority);
  for (const auto& [i, line] : slo_lines)
    if (out[i].cls.priority == lowest)
      error(line, "class '" + out[i].cls.name +
                      "' has the lowest priority: no class below it can be preempted for its "
                      "slo (give it to a higher class)");
  return out;
}

std::optional<Objective> Loader::objective(const toml::key& k, const toml::node& v) {
  static const char* const kExpected =
      "expected one of p50_ms, p90_ms, p95_ms, p99_ms, p999_ms; the same with ttft_ or tpot_ "
      "before it (ttft_p99_ms, tpot_p99_ms); and window_s";
  const toml::table* t = v.as_table();
  if (!t) {
    error(line_of(k), std::string("'slo' must be a table such as { p99_ms = 5 } or "
                                  "{ ttft_p99_ms = 500, tpot_p99_ms = 30 }, not ") +
                          type_name(v));
    return std::nullopt;
  }
  Objective o;
  // Goals stated per metric: one percentile each (p99_ms and p95_ms together would be two
  // targets for one measure).
  std::map<Metric, int> stated;
  bool ok = true, unknown = false;
  for (auto&& [sk, sv] : *t) {
    const std::string key(sk.str());
    if (auto g = goal_of_key(key)) {
      ++stated[g->first];
      auto d = duration(sk, sv, 1ms);
      if (!d || *d <= Duration::zero()) {
        if (d) error(line_of(sk), "'" + key + "' must be greater than 0");
        ok = false;
        continue;
      }
      switch (g->first) {
        case Metric::kLatency:
          o.percentile = g->second;
          o.target = *d;
          break;
        case Metric::kTtft:
          o.ttft = Goal{Metric::kTtft, g->second, *d};
          break;
        case Metric::kTpot:
          o.tpot = Goal{Metric::kTpot, g->second, *d};
          break;
      }
    } else if (key == "window_s") {
      auto d = duration(sk, sv, 1s);
      if (!d || *d < 1s || *d > 3600s) {
        if (d) error(line_of(sk), "'window_s' must be between 1 and 3600");
        ok = false;
      } else {
        o.window = *d;
      }
    } else {
      error(line_of(sk), "unknown key '" + key + "' in slo (" + kExpected + ")");
      ok = false;
      unknown = true;
    }
  }
  for (const auto& [metric, n] : stated)
    if (n > 1) {
      error(line_of(k), "'slo' must name one percentile per measure, not " + std::to_string(n) +
                            " of the " +
                            (metric == Metric::kLatency ? std::string("request latency (p99_ms, ...)")
                                                        : std::string(to_string(metric)) + " (" +
                                                              to_string(metric) + "_p99_ms, ...)"));
      ok = false;
    }
  if (stated.empty() && !unknown) {
    error(line_of(k), "'slo' must name a percentile (p50_ms, p90_ms, p95_ms, p99_ms or p999_ms, "
                      "or the same after ttft_ or tpot_), e.g. slo = { p99_ms = 5 } or "
                      "slo = { ttft_p99_ms = 500, tpot_p99_ms = 30 }");
    return std::nullopt;
  }
  if (!ok || stated.empty()) return std::nullopt;
  return o;
}

void Loader::trigger(const toml::key& k, const toml::node& v, std::vector<RequestSource>& out) {
  std::vector<const toml::node*> items;
  if (const toml::array* a = v.as_array()) {
    for (const auto& n : *a) items.push_back(&n);
    if (items.empty()) error(line_of(k), "'trigger' must name at least one trigger");
  } else {
    items.push_back(&v);
  }
  out.clear();
  for (const toml::node* n : items) {
    auto s = n->value<std::string>();
    if (!n->is_string() || !s) {
      error(line_of(k), std::string("'trigger' must be a string or an array of strings, not ") +
                            type_name(*n));
      continue;
    }
    if (*s == "hint")
      out.push_back(RequestSource::kHint);
    else if (*s == "transparent")
      out.push_back(RequestSource::kTransparent);
    else if (*s == "operator")
      out.push_back(RequestSource::kOperator);
    else
      error(line_of(k), "unknown trigger '" + *s + "' (expected hint, transparent or operator)");
  }
}

void Loader::match(const toml::key& k, const toml::node& v, std::vector<MatchRule>& out) {
  std::vector<const toml::table*> tables;
  if (const toml::table* t = v.as_table()) {
    tables.push_back(t);
  } else if (const toml::array* a = v.as_array(); a && a->is_array_of_tables() && !a->empty()) {
    for (const auto& n : *a) tables.push_back(n.as_table());
  } else {
    error(line_of(k),
          std::string("'match' must be a table or an array of tables, not ") + type_name(v));
    return;
  }
  for (const toml::table* t : tables) {
    MatchRule m;
    current_match_lines_.push_back(line_of(*t));
    for (auto&& [mk, mv] : *t) match_key(mk, mv, m);
    if (t->empty()) error(line_of(k), "empty 'match' table (it would match nothing)");
    out.push_back(std::move(m));
  }
}

void Loader::match_key(const toml::key& k, const toml::node& v, MatchRule& m) {
  if (k == "cmdline") {
    m.cmdline = glob(k, v);
  } else if (k == "exe") {
    m.exe = glob(k, v);
  } else if (k == "cgroup") {
    m.cgroup = glob(k, v);
  } else if (k == "user") {
    m.user = string(k, v);
  } else if (k == "container") {
    m.container = glob(k, v);
  } else if (k == "pod") {
    m.pod = glob(k, v);
    if (m.pod) {
      const std::string& s = m.pod->pattern();
      const auto slash = s.find('/');
      if (slash != std::string::npos &&
          (slash == 0 || slash + 1 == s.size() || s.find('/', slash + 1) != std::string::npos)) {
        error(line_of(k),
              "'pod' must be NAMESPACE/NAME (globs allowed) or a pod uid, not \"" + s + "\"");
        m.pod.reset();
      }
    }
  } else if (k == "uid") {
    if (auto x = integer(k, v)) {
      if (*x < 0 || *x > 0xfffffffe)
        error(line_of(k), "uid " + std::to_string(*x) + " out of range");
      else
        m.uid = static_cast<uint32_t>(*x);
    }
  } else if (k == "pid") {
    if (auto x = integer(k, v)) {
      if (*x <= 0 || *x > 4194304)
        error(line_of(k), "pid " + std::to_string(*x) + " out of range (1 to 4194304)");
      else
        m.pid = static_cast<int>(*x);
    }
  } else if (k == "env") {
    auto s = string(k, v);
    if (!s) return;
    auto eq = s->find('=');
    if (eq == std::string::npos || eq == 0) {
      error(line_of(k), "'env' must be NAME=VALUE (VALUE may be a glob), not \"" + *s + "\"");
      return;
    }
    std::string why;
    auto g = Glob::parse(s->substr(eq + 1), &why);
    if (!g) {
      error(line_of(k), "bad glob in 'env' (\"" + *s + "\"): " + why);
      return;
    }
    m.env = EnvCondition{s->substr(0, eq), std::move(*g)};
  } else {
    error(line_of(k),
          "unknown match key '" + std::string(k.str()) +
              "' (expected cmdline, exe, uid, user, cgroup, container, pod, env, pid)");
  }
}

void Loader::check_trust(const Config& c) {
  if (c.single_tenant || c.classes.empty()) return;
  int lowest = c.classes.front().cls.priority;
  std::string lowest_name = c.classes.front().cls.name;
  for (const auto& r : c.classes)
    if (r.cls.priority < lowest) {
      lowest = r.cls.priority;
      lowest_name = r.cls.name;
    }
  for (std::size_t k = 0; k < c.classes.size(); ++k) {
    const ClassRule& r = c.classes[k];
    if (r.cls.priority == lowest) continue;
    for (std::size_t i = 0; i < r.match.size(); ++i) {
      const std::string why = self_declared_problem(r.match[i]);
      if (why.empty()) continue;
      const int line = k < class_match_lines_.size() && i < class_match_lines_[k].size()
                           ? class_match_lines_[k][i]
                           : 0;
      error(line, "class '" + r.cls.name + "' (priority " + std::to_string(r.cls.priority) +
                      ") may suspend class '" + lowest_name +
                      "', so any process must not be able to put itself in it, but this match "
                      "names nothing the process cannot set itself: " +
                      why +
                      ". Add what the kernel or the runtime decides, e.g. { uid = 1000, "
                      "cmdline = \"*serve*\" }, { user = \"svc-vllm\" }, { cgroup = "
                      "\"/system.slice/vllm.service\" }, { container = \"vllm-*\" } or { pod "
                      "= \"inference/vllm-*\" }; or, if every user of this node is trusted, "
                      "declare it with [policy] single_tenant = true (docs/security.md)");
    }
  }
}

}  // namespace gpreempt::sched::config_loading
