#include "sched/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "common/text_file.h"
#include "sched/class_trust.h"
#include "sched/toml_fields.h"

namespace gpreempt::sched {

std::string ConfigError::to_string() const {
  return line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message;
}

Config builtin_config() {
  return builtin_config(static_cast<std::uint32_t>(::geteuid()));
}

Config builtin_config(std::uint32_t trusted_uid) {
  Config c;
  c.source = "built-in";
  for (auto [name, priority] : {std::pair<const char*, int>{"online", 10}, {"offline", 0}}) {
    ClassRule r;
    r.cls.name = name;
    r.cls.priority = priority;
    MatchRule m;
    if (priority > 0) {
      r.cls.triggers = {RequestSource::kHint, RequestSource::kTransparent};
      m.uid = trusted_uid;
    }
    m.env = EnvCondition{"GPREEMPT_CLASS", *Glob::parse(name, nullptr)};
    r.match.push_back(std::move(m));
    c.classes.push_back(std::move(r));
  }
  return c;
}

namespace {

using namespace std::chrono_literals;

struct DurationKey {
  const char* name;
  Duration ArbiterConfig::*field;
  Duration unit;
};

constexpr DurationKey kPolicyKeys[] = {
    {"resume_after_idle_ms", &ArbiterConfig::resume_after_idle, 1ms},
    {"hold_after_idle_ms", &ArbiterConfig::hold_after_idle, 1ms},
    {"max_suspension_ms", &ArbiterConfig::max_suspension, 1ms},
    {"max_request_ms", &ArbiterConfig::max_request, 1ms},
    {"starvation_window_ms", &ArbiterConfig::starvation_window, 1ms},
    {"starvation_min_run_ms", &ArbiterConfig::starvation_min_run, 1ms},
    {"resume_defer_max_ms", &ArbiterConfig::resume_defer_max, 1ms},
    {"expect_lead_ms", &ArbiterConfig::expect_lead, 1ms},
    {"expect_timeout_ms", &ArbiterConfig::expect_timeout, 1ms},
    {"grace_default_us", &ArbiterConfig::grace_default, 1us},
    {"grace_min_us", &ArbiterConfig::grace_min, 1us},
    {"grace_drain_limit_us", &ArbiterConfig::grace_drain_limit, 1us},
    {"failure_backoff_ms", &ArbiterConfig::failure_backoff, 1ms},
};

class Loader : TomlFields {
 public:
  explicit Loader(std::string file, std::vector<std::string> other_tables)
      : TomlFields(std::move(file)), other_tables_(std::move(other_tables)) {}

  ConfigResult run(std::string_view text) {
    ConfigResult out;
    Config c = builtin_config();
    c.source = file_;
    toml::table root;
    try {
      root = toml::parse(text, file_);
    } catch (const toml::parse_error& e) {
      error(static_cast<int>(e.source().begin.line), std::string(e.description()));
      out.errors = std::move(errors_);
      return out;
    }
    for (auto&& [k, v] : root) {
      if (k == "class") {  // without [[class]], the built-in classes stay
        c.classes = classes(k, v);
      } else if (k == "policy") {
        if (auto* t = table(k, v)) policy(*t, c);
      } else if (std::find(other_tables_.begin(), other_tables_.end(), std::string(k.str())) !=
                 other_tables_.end()) {
        continue;  // the caller's
      } else {
        error(line_of(k), "unknown key '" + std::string(k.str()) + "' (expected " + expected() + ")");
      }
    }
    check_time_slices(c);
    check_trust(c);
    // toml++ iterates tables in key order; report in file order.
    std::stable_sort(errors_.begin(), errors_.end(),
                     [](const ConfigError& a, const ConfigError& b) { return a.line < b.line; });
    if (errors_.empty()) {
      for (auto& w : trust_warnings(c)) out.warnings.push_back({file_, single_tenant_line_, w});
      out.config = std::move(c);
    }
    out.errors = std::move(errors_);
    return out;
  }

 private:
  // "[[class]], [policy] or [daemon]"
  std::string expected() const {
    std::vector<std::string> all{"[[class]]", "[policy]"};
    for (const auto& t : other_tables_) all.push_back("[" + t + "]");
    std::string out;
    for (std::size_t i = 0; i < all.size(); ++i)
      out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
    return out;
  }

  std::optional<Glob> glob(const toml::key& k, const toml::node& v) {
    auto s = string(k, v);
    if (!s) return std::nullopt;
    std::string why;
    auto g = Glob::parse(*s, &why);
    if (!g)
      error(line_of(k), "bad glob in '" + std::string(k.str()) + "' (\"" + *s + "\"): " + why);
    return g;
  }

  // time_slice = { online_ms = 50, offline_ms = 50 }: one `<class>_ms` key per class taking turns;
  // for every GPU (`gpu` nullopt) or for one ([[policy.gpu]], where {} means none there).
  void time_slice(const toml::key& k, const toml::node& v, std::optional<GpuId> gpu) {
    const toml::table* t = table(k, v);
    if (!t) return;
    SliceSet set;
    set.line = line_of(k);
    set.gpu = gpu;
    for (auto&& [ck, cv] : *t) {
      const std::string name(ck.str());
      if (name.size() <= 3 || name.substr(name.size() - 3) != "_ms") {
        error(line_of(ck), "time_slice key '" + name + "' must be CLASS_ms (e.g. offline_ms = 50)");
        set.bad = true;
        continue;
      }
      auto len = duration(ck, cv, 1ms);
      if (!len) {
        set.bad = true;
        continue;
      }
      if (*len <= Duration::zero()) {
        error(line_of(ck), "time_slice '" + name + "' must be greater than 0");
        set.bad = true;
        continue;
      }
      set.slices.push_back({name.substr(0, name.size() - 3), *len});
      set.lines[set.slices.back().class_name] = line_of(ck);
    }
    slice_sets_.push_back(std::move(set));
  }

  // [[policy.gpu]]: gpu_id = N and what that GPU does differently (its time_slice).
  void gpus(const toml::key& k, const toml::node& v) {
    const toml::array* a = v.as_array();
    if (!a || !a->is_array_of_tables()) {
      error(line_of(k),
            "'gpu' in [policy] must be an array of tables: write each as [[policy.gpu]]");
      return;
    }
    std::set<GpuId> seen;
    for (const auto& n : *a) {
      const toml::table& t = *n.as_table();
      std::optional<GpuId> id;
      bool have_id = false;
      std::optional<std::pair<const toml::key*, const toml::node*>> slices;
      for (auto&& [gk, gv] : t) {
        if (gk == "gpu_id") {
          have_id = true;
          if (auto x = integer(gk, gv)) {
            if (*x <= 0 || *x > 0xffffffffLL)
              error(line_of(gk), "gpu_id " + std::to_string(*x) +
                                     " out of range (a KFD gpu_id, as `gpreempt ctl status` lists "
                                     "it)");
            else
              id = static_cast<GpuId>(*x);
          }
        } else if (gk == "time_slice") {
          slices = std::make_pair(&gk, &gv);
        } else {
          error(line_of(gk), "unknown key '" + std::string(gk.str()) +
                                 "' in [[policy.gpu]] (expected gpu_id, time_slice)");
        }
      }
      if (!have_id) {
        error(line_of(t), "[[policy.gpu]] without a gpu_id");
        continue;
      }
      if (!id) continue;
      if (!seen.insert(*id).second) {
        error(line_of(t), "duplicate [[policy.gpu]] for gpu_id " + std::to_string(*id));
        continue;
      }
      if (!slices)
        error(line_of(t), "[[policy.gpu]] for gpu_id " + std::to_string(*id) +
                              " sets nothing (expected time_slice)");
      else
        time_slice(*slices->first, *slices->second, id);
    }
  }

  // Needs the classes, which may come after [policy] in the file.
  void check_time_slices(Config& c) {
    std::map<std::string, int> priority;
    for (const auto& r : c.classes) priority[r.cls.name] = r.cls.priority;
    for (auto& set : slice_sets_) {
      const std::string on = set.gpu ? " (gpu_id " + std::to_string(*set.gpu) + ")" : std::string();
      bool ok = !set.bad;
      for (const auto& s : set.slices)
        if (!priority.count(s.class_name)) {
          error(set.lines[s.class_name], "time_slice" + on + " names class '" + s.class_name +
                                             "', which is not defined (no [[class]] with that "
                                             "name)");
          ok = false;
        }
      // On one GPU, {} turns time slicing off there; anywhere else one class cannot take turns.
      const bool off = set.gpu && set.slices.empty() && !set.bad;
      if (set.slices.size() < 2 && !off) {
        error(set.line, "time_slice" + on + " needs at least two classes to take turns" +
                            (set.gpu ? " (or {} for none on this GPU)" : ""));
        continue;
      }
      // Turns go highest priority first (ties by name): the order of keys in TOML carries nothing.
      std::stable_sort(set.slices.begin(), set.slices.end(),
                       [&](const TimeSlice& a, const TimeSlice& b) {
                         return priority[a.class_name] > priority[b.class_name];
                       });
      Duration period{0};
      for (const auto& s : set.slices) period += s.length;
      for (const auto& s : set.slices)
        if (period - s.length > c.policy.max_suspension) {
          error(set.lines[s.class_name], "time_slice" + on + ": class '" + s.class_name +
                                             "' would wait " +
                                             std::to_string((period - s.length) / 1ms) +
                                             " ms for its turn, more than max_suspension_ms (" +
                                             std::to_string(c.policy.max_suspension / 1ms) + ")");
          ok = false;
        }
      if (!ok) continue;
      if (set.gpu)
        c.policy.gpu_time_slice[*set.gpu] = std::move(set.slices);
      else
        c.policy.time_slice = std::move(set.slices);
    }
  }

  void policy(const toml::table& t, Config& c) {
    ArbiterConfig& p = c.policy;
    int window_line = 0, min_run_line = 0, max_line = 0, max_request_line = 0;
    for (auto&& [k, v] : t) {
      if (k == "single_tenant") {
        if (!v.is_boolean()) {
          error(line_of(k), std::string("'single_tenant' must be a boolean, not ") + type_name(v));
        } else {
          c.single_tenant = *v.value<bool>();
          single_tenant_line_ = line_of(k);
        }
        continue;
      }
      if (k == "time_slice") {
        time_slice(k, v, std::nullopt);
        continue;
      }
      if (k == "gpu") {
        gpus(k, v);
        continue;
      }
      if (k == "operator_overrides_guard") {
        if (!v.is_boolean())
          error(line_of(k),
                std::string("'operator_overrides_guard' must be a boolean, not ") + type_name(v));
        else
          p.operator_overrides_guard = *v.value<bool>();
        continue;
      }
      const DurationKey* d = nullptr;
      for (const auto& x : kPolicyKeys)
        if (k == x.name) d = &x;
      if (!d) {
        error(line_of(k), "unknown key '" + std::string(k.str()) + "' in [policy]");
        continue;
      }
      if (auto val = duration(k, v, d->unit)) p.*(d->field) = *val;
      if (k == "starvation_window_ms") window_line = line_of(k);
      if (k == "starvation_min_run_ms") min_run_line = line_of(k);
      if (k == "max_suspension_ms") max_line = line_of(k);
      if (k == "max_request_ms") max_request_line = line_of(k);
    }
    if (p.max_suspension <= Duration::zero())
      error(max_line, "max_suspension_ms must be greater than 0 (it bounds every suspension)");
    if (p.max_request <= Duration::zero())
      error(max_request_line,
            "max_request_ms must be greater than 0 (it bounds every request a client begins)");
    // Zero would let a higher class hold a lower one suspended for the whole window, every window.
    if (p.starvation_min_run <= Duration::zero())
      error(min_run_line ? min_run_line : window_line,
            "starvation_min_run_ms must be greater than 0 (it is every suspended process's "
            "guaranteed share of each window)");
    else if (p.starvation_min_run >= p.starvation_window)
      error(min_run_line ? min_run_line : window_line,
            "starvation_min_run_ms must be less than starvation_window_ms");
  }

  std::vector<ClassRule> classes(const toml::key& k, const toml::node& v) {
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

  // slo = { p99_ms = 5, window_s = 10 }: exactly one percentile key (p50_ms, p90_ms, p95_ms,
  // p99_ms, p999_ms) and an optional window (default 10 s).
  std::optional<Objective> objective(const toml::key& k, const toml::node& v) {
    const toml::table* t = v.as_table();
    if (!t) {
      error(line_of(k), std::string("'slo' must be a table such as { p99_ms = 5 }, not ") +
                            type_name(v));
      return std::nullopt;
    }
    Objective o;
    int percentiles = 0;
    bool ok = true;
    for (auto&& [sk, sv] : *t) {
      const std::string key(sk.str());
      if (auto p = percentile_of_key(key)) {
        ++percentiles;
        o.percentile = *p;
        auto d = duration(sk, sv, 1ms);
        if (!d || *d <= Duration::zero()) {
          if (d) error(line_of(sk), "'" + key + "' must be greater than 0");
          ok = false;
        } else {
          o.target = *d;
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
        error(line_of(sk), "unknown key '" + key +
                               "' in slo (expected one of p50_ms, p90_ms, p95_ms, p99_ms, "
                               "p999_ms, and window_s)");
        ok = false;
      }
    }
    bool unknown = false;
    for (auto&& [sk, sv] : *t)
      unknown |= !percentile_of_key(std::string(sk.str())) && sk != "window_s";
    if (percentiles != 1 && !unknown) {
      error(line_of(k), "'slo' must name exactly one percentile (p50_ms, p90_ms, p95_ms, p99_ms "
                        "or p999_ms), e.g. slo = { p99_ms = 5 }");
      return std::nullopt;
    }
    if (!ok || percentiles != 1) return std::nullopt;
    return o;
  }

  void trigger(const toml::key& k, const toml::node& v, std::vector<RequestSource>& out) {
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

  void match(const toml::key& k, const toml::node& v, std::vector<MatchRule>& out) {
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

  void match_key(const toml::key& k, const toml::node& v, MatchRule& m) {
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

  // A class that may preempt another matches only what a process cannot set itself
  // (class_trust.h), unless the node is declared single-tenant.
  void check_trust(const Config& c) {
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

  std::vector<std::string> other_tables_;  // the caller's, neither read nor refused here
  int single_tenant_line_ = 0;
  // The line of each match table of each [[class]], in file order (check_trust's error lines).
  std::vector<std::vector<int>> class_match_lines_;
  std::vector<int> current_match_lines_;
  struct SliceSet {
    int line = 0;              // of the time_slice key
    std::optional<GpuId> gpu;  // nullopt: every GPU
    std::vector<TimeSlice> slices;
    std::map<std::string, int> lines;  // class → line of its key
    bool bad = false;                  // a key was already reported
  };
  std::vector<SliceSet> slice_sets_;
};

}  // namespace

std::vector<std::string> trust_warnings(const Config& c) {
  std::vector<std::string> out;
  if (!c.single_tenant) return out;
  int lowest = c.classes.empty() ? 0 : c.classes.front().cls.priority;
  for (const auto& r : c.classes) lowest = std::min(lowest, r.cls.priority);
  std::string relying;
  for (const auto& r : c.classes) {
    if (r.cls.priority == lowest) continue;
    for (const auto& m : r.match)
      if (!self_declared_problem(m).empty()) {
        relying += std::string(relying.empty() ? "" : ", ") + "class '" + r.cls.name + "' (" +
                   m.describe() + ")";
        break;
      }
  }
  out.push_back(
      "single_tenant = true: every local user is trusted; " +
      (relying.empty()
           ? std::string("no class relies on it yet, but any rule added may match "
                         "what a process sets itself")
           : "any process can put itself in " + relying + " and suspend the classes below it"));
  return out;
}

ConfigResult load_config(std::string_view text, const std::string& file_name,
                         std::vector<std::string> other_tables) {
  return Loader(file_name, std::move(other_tables)).run(text);
}

std::string config_file_problem(std::uint32_t owner, std::uint32_t mode,
                                std::uint32_t daemon_euid) {
  if (owner != 0 && owner != daemon_euid)
    return "owned by uid " + std::to_string(owner) + ", not by root" +
           (daemon_euid != 0 ? " or the daemon's own uid " + std::to_string(daemon_euid) : "") +
           ": whoever writes the config decides who preempts whom (chown root:root FILE)";
  if (mode & (S_IWGRP | S_IWOTH))
    return std::string("writable by its ") + ((mode & S_IWOTH) ? "world" : "group") +
           ": whoever writes the config decides who preempts whom (chmod go-w FILE)";
  return "";
}

ConfigText read_config_text(const std::string& path) {
  ConfigText r;
  // One descriptor for the check and the read, so the file checked is the file read. Symlinks are
  // followed (a Kubernetes ConfigMap volume is one); what counts is the file they reach.
  // O_NONBLOCK: a FIFO named as the config must not block the open (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    r.error = ConfigError{path, 0, std::string("cannot read: ") + std::strerror(errno)};
    if (fd >= 0) ::close(fd);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    r.error = ConfigError{path, 0, "not a regular file"};
    return r;
  }
  if (std::string why = config_file_problem(st.st_uid, st.st_mode, ::geteuid()); !why.empty()) {
    ::close(fd);
    r.error = ConfigError{path, 0, why};
    return r;
  }
  // A config is a few kilobytes; a bound keeps a huge file from exhausting the daemon's memory.
  constexpr std::size_t kMaxConfigBytes = 1 << 20;
  auto text = read_descriptor(fd, kMaxConfigBytes);
  const int e = errno;
  ::close(fd);
  if (!text) {
    r.error = ConfigError{path, 0,
                          e == EFBIG ? "larger than " + std::to_string(kMaxConfigBytes) + " bytes"
                                     : std::string("cannot read: ") + std::strerror(e)};
    return r;
  }
  r.text = std::move(*text);
  return r;
}

ConfigResult check_config(const std::string& path, std::vector<std::string> other_tables) {
  ConfigText t = read_config_text(path);
  if (!t.text) {
    ConfigResult r;
    r.errors.push_back(*t.error);
    return r;
  }
  return load_config(*t.text, path, std::move(other_tables));
}

}  // namespace gpreempt::sched
