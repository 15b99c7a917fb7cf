#include "sched/accounting.h"

namespace gpreempt::sched {

void Accounting::bind(const ProcessKey& key, const std::string& class_name) {
  class_of_[key] = class_name;
  processes_[key];
  classes_[class_name];
}

void Accounting::forget(const ProcessKey& key) {
  class_of_.erase(key);
  processes_.erase(key);
}

template <class F>
void Accounting::both(const ProcessKey& key, F f) {
  auto c = class_of_.find(key);
  if (c == class_of_.end()) return;
  f(processes_[key]);
  f(classes_[c->second]);
}

void Accounting::suspended(const ProcessKey& key, bool by_operator) {
  both(key, [&](UsageStats& s) {
    ++s.suspensions;
    if (by_operator) ++s.operator_suspensions;
  });
}

void Accounting::resumed(const ProcessKey& key, Duration was_suspended, bool forced,
                         bool by_operator) {
  both(key, [&](UsageStats& s) {
    s.suspended_time += was_suspended;
    if (by_operator) s.operator_suspended_time += was_suspended;
    if (forced) ++s.forced_resumes;
  });
}

void Accounting::actuation_failed(const ProcessKey& key, bool timed_out) {
  both(key, [&](UsageStats& s) { ++(timed_out ? s.timed_out_actuations : s.failed_actuations); });
}

void Accounting::request_done(const ProcessKey& key, Duration latency) {
  both(key, [&](UsageStats& s) { s.request_latency.add(latency); });
}

void Accounting::request_ignored(const ProcessKey& key) {
  both(key, [](UsageStats& s) { ++s.requests_ignored; });
}

void Accounting::request_aborted(const ProcessKey& key) {
  both(key, [](UsageStats& s) { ++s.requests_aborted; });
}

}  // namespace gpreempt::sched
