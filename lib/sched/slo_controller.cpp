#include "sched/slo_controller.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/latency_summary.h"

namespace gpreempt::sched {

namespace {

double ms(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

Duration percentile_of(const std::vector<double>& ns, double p) {
  return Duration(static_cast<Duration::rep>(std::llround(gpreempt::percentile(ns, p))));
}

template <class... Args>
std::string format(const char* fmt, Args... args) {
  char buf[192];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

std::size_t SloController::min_samples(double percentile) {
  const double tail = 1.0 - percentile / 100.0;
  const auto n = static_cast<std::size_t>(std::ceil(1.0 / tail - 1e-9));
  return std::max<std::size_t>(20, n);
}

void SloController::configure(const std::vector<SchedClass>& classes, Time now) {
  std::map<std::string, State> next;
  for (const auto& c : classes) {
    if (!c.objective) continue;
    auto it = states_.find(c.name);
    if (it != states_.end() && it->second.objective == *c.objective) {
      next[c.name] = std::move(it->second);
      continue;
    }
    State s;
    s.objective = *c.objective;
    s.since = now;
    s.why = "start: every request protected until the objective " + c.objective->describe() +
            " is seen to hold";
    next[c.name] = std::move(s);
  }
  states_ = std::move(next);
}

void SloController::prune(State& s, Time now) {
  while (!s.samples.empty() && s.samples.front().at < now - s.objective.window)
    s.samples.pop_front();
}

SloController::Evidence SloController::evidence(const State& s, const Goal& goal) {
  Evidence e;
  std::vector<double> ns;
  for (const auto& x : s.samples) {
    if (x.at < s.since || x.under != s.action || x.metric != goal.metric) continue;
    ns.push_back(static_cast<double>(x.value.count()));
    if (x.value > goal.target) ++e.over;
  }
  e.n = ns.size();
  if (e.n) e.value = percentile_of(ns, goal.percentile);
  return e;
}

void SloController::move(State& s, Protection to, Time now, std::string why) {
  s.action = to;
  s.since = now;
  s.why = std::move(why);
  ++s.changes;
}

bool SloController::record(const std::string& cls, Time now, Duration latency) {
  return record(cls, now, Metric::kLatency, latency);
}

bool SloController::record(const std::string& cls, Time now, Metric metric, Duration value) {
  auto it = states_.find(cls);
  if (it == states_.end()) return false;
  State& s = it->second;
  const std::vector<Goal> goals = s.objective.goals();
  if (std::none_of(goals.begin(), goals.end(), [&](const Goal& g) { return g.metric == metric; }))
    return false;
  s.samples.push_back({now, value, s.action, metric});
  prune(s, now);
  const Objective& o = s.objective;
  const char* under = to_string(s.action);
  // Every goal must hold: the first one broken escalates.
  bool relaxable = true;
  std::string relax_why;
  for (const Goal& g : goals) {
    const std::size_t need = min_samples(g.percentile);
    const Evidence e = evidence(s, g);
    // More measures over the target than `need` of them may have: the percentile of any `need`
    // measures that include them is over it already.
    const auto allowed = static_cast<std::size_t>(std::floor(need * (1.0 - g.percentile / 100.0)));
    const bool over = e.n >= need && e.value > g.target;
    if (over || e.over > allowed) {
      s.broke_at[s.action] = now;
      if (s.action == Protection::kHold) return false;  // nothing stronger to do
      const std::string what = g.metric == Metric::kLatency ? "requests"
                               : g.metric == Metric::kTtft  ? "TTFTs"
                                                            : "TPOTs";
      const std::string label = g.describe();
      const std::string name = label.substr(0, label.find(" <="));  // "p99", "TTFT p99"
      const std::string why =
          over ? format("%s %.3f ms > target over %zu %s under %s", name.c_str(), ms(e.value),
                        e.n, what.c_str(), under)
               : format("%zu %s over the target (%zu allowed in %zu) under %s", e.over,
                        what.c_str(), allowed, need, under);
      move(s, stronger(s.action), now, why + "; target " + o.describe());
      return true;
    }
    if (e.n < need || ms(e.value) > kRelaxFraction * ms(g.target)) {
      relaxable = false;
    } else {
      const std::string label = g.describe();
      relax_why += format("%s%s %.3f ms", relax_why.empty() ? "" : ", ",
                          label.substr(0, label.find(" <=")).c_str(), ms(e.value));
    }
  }
  if (s.action == Protection::kNone || now - s.since < o.window || !relaxable) return false;
  const Protection down = weaker(s.action);
  auto broke = s.broke_at.find(down);
  if (broke != s.broke_at.end() && now - broke->second < kRetryAfterWindows * o.window) return false;
  move(s, down, now,
       relax_why + format(" at most %.0f%% of the target under %s: trying less",
                          kRelaxFraction * 100, under) +
           "; target " + o.describe());
  return true;
}

Protection SloController::action(const std::string& cls) const {
  auto it = states_.find(cls);
  return it == states_.end() ? Protection::kPerRequest : it->second.action;
}

std::optional<Duration> SloController::measured(const std::string& cls, Time now) const {
  auto it = states_.find(cls);
  if (it == states_.end()) return std::nullopt;
  return measured(cls, Goal{Metric::kLatency, it->second.objective.percentile, {}}, now);
}

std::optional<Duration> SloController::measured(const std::string& cls, const Goal& goal,
                                                Time now) const {
  auto it = states_.find(cls);
  if (it == states_.end()) return std::nullopt;
  std::vector<double> ns;
  for (const auto& x : it->second.samples)
    if (x.metric == goal.metric && x.at >= now - it->second.objective.window)
      ns.push_back(static_cast<double>(x.value.count()));
  if (ns.empty()) return std::nullopt;
  return percentile_of(ns, goal.percentile);
}

std::size_t SloController::count(const std::string& cls, Metric metric, Time now) const {
  auto it = states_.find(cls);
  if (it == states_.end()) return 0;
  return static_cast<std::size_t>(
      std::count_if(it->second.samples.begin(), it->second.samples.end(), [&](const Sample& x) {
        return x.metric == metric && x.at >= now - it->second.objective.window;
      }));
}

}  // namespace gpreempt::sched
