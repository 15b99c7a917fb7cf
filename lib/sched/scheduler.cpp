#include "sched/scheduler.h"

#include <algorithm>

namespace gpreempt::sched {

Scheduler::Scheduler(std::vector<SchedClass> classes, ArbiterConfig config)
    : classes_(std::move(classes)), config_(config) {}

const GpuArbiter* Scheduler::gpu(GpuId id) const {
  auto it = arbiters_.find(id);
  return it == arbiters_.end() ? nullptr : it->second.get();
}

std::vector<GpuId> Scheduler::gpus() const {
  std::vector<GpuId> v;
  for (const auto& [id, a] : arbiters_) v.push_back(id);
  return v;
}

const SchedClass* Scheduler::class_named(const std::string& name) const {
  for (const auto& c : classes_)
    if (c.name == name) return &c;
  return nullptr;
}

const SchedClass* Scheduler::class_of(const ProcessKey& key) const {
  const ProcessRecord* p = processes_.find(key);
  return p ? p->cls : nullptr;
}

std::vector<GpuId> Scheduler::gpus_of(const ProcessKey& key) const {
  const ProcessRecord* p = processes_.find(key);
  return p ? p->gpus : std::vector<GpuId>{};
}

std::optional<Time> Scheduler::request_started(const ProcessKey& key, uint64_t request) const {
  const ProcessRecord* p = processes_.find(key);
  if (!p) return std::nullopt;
  auto r = p->open_requests.find(request);
  if (r == p->open_requests.end()) return std::nullopt;
  return r->second.started;
}

std::vector<Action> Scheduler::recover(GpuId gpu, std::vector<ProcessKey> targets) {
  action::Resume r;
  r.id = sink_.next_id++;
  r.gpu = gpu;
  r.targets = std::move(targets);
  r.reason = ResumeReason::kRecovery;
  recovering_.insert(r.id);
  return {std::move(r)};
}

std::vector<Scheduler::OperatorPair> Scheduler::operator_targets(
    const event::OperatorTarget& target) const {
  std::vector<OperatorPair> out;
  for (const auto& [key, p] : processes_.all()) {
    if (!p.cls) continue;  // unclassified processes are left alone, by operators too
    if (target.key && key != *target.key) continue;
    if (target.class_name && p.cls->name != *target.class_name) continue;
    if (!target.key && !target.class_name) continue;
    for (GpuId g : p.gpus)
      if (!target.gpu || *target.gpu == g) out.push_back({key, g});
  }
  return out;
}

GpuArbiter& Scheduler::arbiter(GpuId id) {
  auto& a = arbiters_[id];
  if (!a) a = std::make_unique<GpuArbiter>(id, config_, accounting_);
  return *a;
}

std::vector<Action> Scheduler::reconfigure(Time now, std::vector<SchedClass> classes,
                                           ArbiterConfig config) {
  std::map<ProcessKey, std::string> class_of;
  for (const auto& [key, p] : processes_.all())
    if (p.cls) class_of[key] = p.cls->name;
  classes_ = std::move(classes);
  config_ = config;  // in place: the arbiters hold a reference to it
  slo_.configure(classes_, now);
  slo_configured_ = true;
  sink_.actions.clear();
  for (auto& [key, p] : processes_.all()) {
    auto it = class_of.find(key);
    p.cls = it == class_of.end() ? nullptr : class_named(it->second);
    place(key, p, p.gpus, now);
  }
  return decide(now);
}

std::vector<Action> Scheduler::on_event(Time now, const Event& event) {
  if (!slo_configured_) {  // the objectives' clock starts with the first event
    slo_.configure(classes_, now);
    slo_configured_ = true;
  }
  sink_.actions.clear();
  std::visit([&](const auto& e) { handle(now, e); }, event);
  return decide(now);
}

std::vector<Action> Scheduler::decide(Time now) {
  // Every arbiter decides again: an event for one GPU never needs to wait for another, and a
  // decision with nothing to do costs little.
  std::optional<Time> next;
  for (auto& [id, a] : arbiters_) {
    if (!stopped_) a->step(now, sink_);
    if (auto t = a->next_check(); t && (!next || *t < *next)) next = *t;
  }
  if (next != armed_) {
    armed_ = next;
    sink_.actions.emplace_back(action::ArmTimer{next});
  }
  return std::move(sink_.actions);
}

ProcessRecord& Scheduler::admit(const ProcessKey& key, Time now) {
  if (auto old = processes_.displaced_by(key)) forget(*old, now);
  return processes_.admit(key);
}

void Scheduler::forget(const ProcessKey& key, Time now) {
  const ProcessRecord* p = processes_.find(key);
  if (!p) return;
  for (GpuId g : p->gpus) arbiter(g).leave(key, now);
  for (size_t i = 0; i < p->open_requests.size(); ++i) accounting_.request_aborted(key);
  processes_.remove(key);
}

void Scheduler::place(const ProcessKey& key, ProcessRecord& p, std::vector<GpuId> gpus, Time now) {
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  for (GpuId g : p.gpus)
    if (!std::binary_search(gpus.begin(), gpus.end(), g)) arbiter(g).leave(key, now);
  p.gpus = std::move(gpus);
  for (GpuId g : p.gpus) {
    GpuArbiter& a = arbiter(g);
    if (!p.cls) {
      a.leave(key, now);  // unclassified processes are left alone
      continue;
    }
    const bool joining = !a.has(key);
    a.join(key, *p.cls, slo_.action(p.cls->name));
    if (joining)  // its open requests count on a GPU it starts using too
      for (size_t i = 0; i < p.open_requests.size(); ++i) a.request_started(key, now);
  }
}

ProcessRecord* Scheduler::requester(const ProcessKey& key, RequestSource source) {
  ProcessRecord* p = processes_.find(key);
  if (!p || !p->cls) {
    accounting_.unknown_request();
    return nullptr;
  }
  if (!p->cls->accepts(source)) {
    accounting_.request_ignored(key);
    return nullptr;
  }
  return p;
}

void Scheduler::handle(Time now, const event::RequestStarted& e) {
  ProcessRecord* p = requester(e.key, e.source);
  if (!p || p->open_requests.count(e.request)) return;
  p->open_requests[e.request] = {now, e.source, RequestTokens{now, {}, 0, {}}};
  for (GpuId g : p->gpus) arbiter(g).request_started(e.key, now);
  update_lateness(e.key, *p);
}

void Scheduler::record(const SchedClass& cls, Time now, Metric metric,
                       std::optional<Duration> value) {
  if (value && slo_.record(cls.name, now, metric, *value))
    for (auto& [g, a] : arbiters_) a->set_protection(cls.name, slo_.action(cls.name));
}

void Scheduler::update_lateness(const ProcessKey& key, const ProcessRecord& p) {
  if (!p.cls || !p.cls->objective || !p.cls->objective->keyed_on_tokens()) return;
  std::optional<Time> late;
  for (const auto& [id, r] : p.open_requests)
    if (auto at = r.tokens.late_at(*p.cls->objective); at && (!late || *at < *late)) late = at;
  for (GpuId g : p.gpus) arbiter(g).set_late_at(key, late);
}

void Scheduler::handle(Time now, const event::RequestFinished& e) {
  ProcessRecord* found = processes_.find(e.key);
  if (!found) return;
  ProcessRecord& p = *found;
  auto r = p.open_requests.find(e.request);
  if (r == p.open_requests.end()) return;
  accounting_.request_done(e.key, now - r->second.started);
  // The objective judges the class's requests whatever their source (hint or transparent).
  if (p.cls) {
    record(*p.cls, now, Metric::kLatency, now - r->second.started);
    record(*p.cls, now, Metric::kTpot, r->second.tokens.tpot(now));
  }
  p.open_requests.erase(r);
  for (GpuId g : p.gpus) arbiter(g).request_finished(e.key, now);
  update_lateness(e.key, p);
}

void Scheduler::handle(Time now, const event::RequestProgress& e) {
  ProcessRecord* found = processes_.find(e.key);
  if (!found) return;
  ProcessRecord& p = *found;
  auto r = p.open_requests.find(e.request);
  if (r == p.open_requests.end()) return;
  if (r->second.tokens.report(now, e.tokens, e.at_end) && p.cls)
    record(*p.cls, now, Metric::kTtft, r->second.tokens.ttft());
  update_lateness(e.key, p);
}

void Scheduler::handle(Time now, const event::RequestExpected& e) {
  ProcessRecord* p = requester(e.key, e.source);
  if (!p) return;
  for (GpuId g : p->gpus)
    arbiter(g).request_expected(e.key, now + std::max(e.in, Duration::zero()));
}

void Scheduler::handle(Time now, const event::ProcessAppeared& e) {
  place(e.key, admit(e.key, now), e.gpus, now);
}

void Scheduler::handle(Time now, const event::ProcessClassified& e) {
  ProcessRecord& p = admit(e.key, now);
  p.class_name = e.class_name;
  p.description = e.description;
  p.cls = e.class_name ? class_named(*e.class_name) : nullptr;
  if (p.cls) accounting_.bind(e.key, p.cls->name);
  place(e.key, p, e.gpus, now);
}

void Scheduler::handle(Time now, const event::ProcessExited& e) {
  forget(e.key, now);
}

void Scheduler::handle(Time, const event::GpuCapability& e) {
  arbiter(e.gpu).set_capability(e.can_suspend, e.reason);
}

void Scheduler::handle(Time now, const event::ActuationCompleted& e) {
  if (recovering_.erase(e.action)) return;  // no arbiter asked for it
  if (auto it = arbiters_.find(e.gpu); it != arbiters_.end()) it->second->completed(e, now, sink_);
}

void Scheduler::handle(Time now, const event::OperatorSuspend& e) {
  const Time until = now + std::max(e.duration, Duration::zero());
  for (const auto& t : operator_targets(e.target)) arbiter(t.gpu).operator_hold(t.key, until);
}

void Scheduler::handle(Time now, const event::OperatorResume& e) {
  for (const auto& t : operator_targets(e.target)) arbiter(t.gpu).operator_release(t.key, now);
}

void Scheduler::handle(Time, const event::KernelObserved& e) {
  if (auto it = arbiters_.find(e.gpu); it != arbiters_.end())
    it->second->kernel_observed(e.key, e.length);
}

void Scheduler::handle(Time, const event::TimerFired&) {
  armed_.reset();  // fired: the next one is armed afresh
}

void Scheduler::handle(Time, const event::Shutdown&) {
  stopped_ = true;
  for (auto& [id, a] : arbiters_) a->shutdown(sink_);
}

}  // namespace gpreempt::sched
