// [policy] and [[policy.gpu]] of gpreemptd's config: the arbiter's knobs and the time slices.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sched/config_loader.h"

namespace gpreempt::sched::config_loading {

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

}  // namespace

void Loader::time_slice(const toml::key& k, const toml::node& v, std::optional<GpuId> gpu) {
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

void Loader::gpus(const toml::key& k, const toml::node& v) {
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

void Loader::check_time_slices(Config& c) {
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

void Loader::policy(const toml::table& t, Config& c) {
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
    if (k == "name") {
      std::string why;
      if (!v.is_string())
        error(line_of(k), std::string("'name' must be a string (\"gpreempt\" or \"none\"), not ") +
                              type_name(v));
      else if (auto name = parse_policy_name(*v.value<std::string>(), &why))
        p.policy = *name;
      else
        error(line_of(k), why);
      continue;
    }
    if (k == "gpu") {
      gpus(k, v);
      continue;
    }
    bool ArbiterConfig::*flag = k == "operator_overrides_guard" ? &ArbiterConfig::operator_overrides_guard
                                : k == "coalesce_flaps"         ? &ArbiterConfig::coalesce_flaps
                                                                : nullptr;
    if (flag) {
      if (!v.is_boolean())
        error(line_of(k), "'" + std::string(k.str()) + "' must be a boolean, not " + type_name(v));
      else
        p.*flag = *v.value<bool>();
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

}  // namespace gpreempt::sched::config_loading
