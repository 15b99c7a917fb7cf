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

SloController::Evidence SloController::evidence(const State& s) {
  Evidence e;
  std::vector<double> ns;
  for (const auto& x : s.samples) {
    if (x.at < s.since || x.under != s.action) continue;
    ns.push_back(static_cast<double>(x.latency.count()));
    if (x.latency > s.objective.target) ++e.over;
  }
  e.n = ns.size();
  if (e.n) e.value = percentile_of(ns, s.objective.percentile);
  return e;
}

void SloController::move(State& s, Protection to, Time now, std::string why) {
  s.action = to;
  s.since = now;
  s.why = std::move(why);
  ++s.changes;
}

bool SloController::record(const std::string& cls, Time now, Duration latency) {
  auto it = states_.find(cls);
  if (it == states_.end()) return false;
  State& s = it->second;
  s.samples.push_back({now, latency, s.action});
  prune(s, now);
  const Objective& o = s.objective;
  const std::size_t need = min_samples(o.percentile);
  const Evidence e = evidence(s);
  // More requests over the target than `need` of them may have: the percentile of any `need`
  // requests that include them is over it already.
  const auto allowed = static_cast<std::size_t>(std::floor(need * (1.0 - o.percentile / 100.0)));
  const bool broken = (e.n >= need && e.value > o.target) || e.over > allowed;
  const char* under = to_string(s.action);
  if (broken) {
    s.broke_at[s.action] = now;
    if (s.action == Protection::kHold) return false;  // nothing stronger to do
    const Protection up = stronger(s.action);
    const std::string why =
        e.n >= need && e.value > o.target
            ? format("p%g %.3f ms > target over %zu requests under %s", o.percentile, ms(e.value),
                     e.n, under)
            : format("%zu requests over the target (%zu allowed in %zu) under %s", e.over, allowed,
                     need, under);
    move(s, up, now, why + "; target " + o.describe());
    return true;
  }
  if (s.action == Protection::kNone || now - s.since < o.window || e.n < need ||
      ms(e.value) > kRelaxFraction * ms(o.target))
    return false;
  const Protection down = weaker(s.action);
  auto broke = s.broke_at.find(down);
  if (broke != s.broke_at.end() && now - broke->second < kRetryAfterWindows * o.window) return false;
  move(s, down, now,
       format("p%g %.3f ms at most %.0f%% of the target over %zu requests under %s: trying less",
              o.percentile, ms(e.value), kRelaxFraction * 100, e.n, under) +
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
  std::vector<double> ns;
  for (const auto& x : it->second.samples)
    if (x.at >= now - it->second.objective.window) ns.push_back(static_cast<double>(x.latency.count()));
  if (ns.empty()) return std::nullopt;
  return percentile_of(ns, it->second.objective.percentile);
}

}  // namespace gpreempt::sched
