#include "sched/accounting.h"

namespace gpreempt::sched {

void Accounting::bind(const ProcessKey& key, const std::string& class_name) {
  if (ProcessRecord* p = registry_.find(key)) p->accounted_class = class_name;
  classes_[class_name];
}

template <class F>
void Accounting::both(const ProcessKey& key, F f) {
  ProcessRecord* p = registry_.find(key);
  if (!p || !p->accounted_class) return;
  f(p->usage);
  f(classes_[*p->accounted_class]);
}

const UsageStats* Accounting::process(const ProcessKey& key) const {
  const ProcessRecord* p = registry_.find(key);
  return p && p->accounted_class ? &p->usage : nullptr;
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
