#include "sched/runtime.h"

#include <stdexcept>

namespace gpreempt::sched {

Runtime::Runtime(std::vector<SchedClass> classes, ArbiterConfig config, Ports ports,
                 ActivityDetectorConfig detector)
    : scheduler_(std::move(classes), config),
      ports_(std::move(ports)),
      suspensions_({[this](const ProcessKey& k) { return scheduler_.knows(k); },
                    [this](GpuId g, const ProcessKey& k) {
                      const GpuArbiter* a = scheduler_.gpu(g);
                      return a && a->has(k) && !scheduler_.stopped();
                    },
                    [this](const ProcessKey& k) {
                      const SchedClass* c = scheduler_.class_of(k);
                      return c ? c->name : std::string();
                    }}),
      detector_(detector) {
  if (!ports_.actuator) throw std::invalid_argument("sched::Runtime needs an actuator port");
  if (!ports_.arm_timer) throw std::invalid_argument("sched::Runtime needs a timer port");
}

void Runtime::dispatch(Time now, const Event& e) {
  if (const auto* c = std::get_if<event::ActuationCompleted>(&e)) return completed(now, *c);
  // A process that arrives under a pid a known one holds took it: the known one is gone, and ends
  // here as if it had exited, before the newcomer is admitted.
  std::optional<ProcessKey> newcomer;
  if (const auto* a = std::get_if<event::ProcessAppeared>(&e)) newcomer = a->key;
  if (const auto* a = std::get_if<event::ProcessClassified>(&e)) newcomer = a->key;
  if (newcomer)
    if (auto old = scheduler_.processes().displaced_by(*newcomer))
      dispatch(now, event::ProcessExited{*old});
  // Its suspensions end with the process, before the scheduler forgets it.
  std::optional<ProcessKey> leaving;
  if (const auto* x = std::get_if<event::ProcessExited>(&e)) {
    // Its open transparent request ends first, as it would had its queues stopped being read.
    for (const auto& f : detector_.forget(now, x->key)) dispatch(now, f);
    suspensions_.exited(x->key, now);
    if (scheduler_.knows(x->key)) leaving = x->key;
  }
  std::optional<RequestDone> done;
  if (const auto* f = std::get_if<event::RequestFinished>(&e))
    if (auto started = scheduler_.request_started(f->key, f->request)) {
      const SchedClass* c = scheduler_.class_of(f->key);
      done = RequestDone{f->key, f->request, f->source, c ? c->name : std::string(),
                         scheduler_.gpus_of(f->key), now - *started};
    }
  decide(now, e);
  if (done) {
    requests_.done(*done);
    if (ports_.request_done) ports_.request_done(now, *done);
  }
  if (leaving) requests_.exited(*leaving);
  resume_orphans(now);
  // Last, with the Runtime settled: the driver may call back into it (gpreemptd's transparent
  // trigger reports the watch it drops).
  if (leaving && ports_.process_left) ports_.process_left(now, *leaving);
}

void Runtime::completed(Time now, const event::ActuationCompleted& c) {
  if (performing_ > 0) {
    early_answers_.emplace_back(now, c);
    return;
  }
  answer(now, c);
}

void Runtime::answer(Time now, const event::ActuationCompleted& c) {
  auto it = in_flight_.find(c.action);
  if (it == in_flight_.end()) return;  // not ours, or answered already
  const bool suspend = it->second;
  in_flight_.erase(it);
  suspensions_.completed(c, suspend, now);
  decide(now, c);
  resume_orphans(now);
}

void Runtime::queues_sampled(Time now, const ProcessKey& key,
                             const std::vector<QueueActivitySample>& samples) {
  for (const auto& e : detector_.update(now, key, samples)) dispatch(now, e);
}

void Runtime::queues_unwatched(Time now, const ProcessKey& key) {
  for (const auto& e : detector_.forget(now, key)) dispatch(now, e);
}

void Runtime::decide(Time now, const Event& e) {
  if (ports_.inspect) ports_.inspect(now, e);
  perform(now, scheduler_.on_event(now, e));
}

void Runtime::reconfigure(Time now, std::vector<SchedClass> classes, ArbiterConfig config) {
  perform(now, scheduler_.reconfigure(now, std::move(classes), config));
  resume_orphans(now);
}

void Runtime::perform(Time now, std::vector<Action> actions) {
  ++performing_;
  for (const auto& a : actions) {
    if (const auto* s = std::get_if<action::Suspend>(&a)) {
      in_flight_[s->id] = true;
      suspensions_.posted(s->gpu, s->targets);
      ports_.actuator->suspend(now, *s);
    } else if (const auto* r = std::get_if<action::Resume>(&a)) {
      in_flight_[r->id] = false;
      suspensions_.posted(r->gpu, r->targets);
      ports_.actuator->resume(now, *r);
    } else if (const auto* t = std::get_if<action::ArmTimer>(&a)) {
      ports_.arm_timer(t->at);
    }
    // PriorityOnly is a report: the observer sees it.
  }
  if (ports_.observe) ports_.observe(now, actions);
  if (--performing_ > 0) return;
  while (!early_answers_.empty()) {
    auto [t, c] = std::move(early_answers_.front());
    early_answers_.erase(early_answers_.begin());
    answer(t, c);
  }
}

void Runtime::resume_orphans(Time now) {
  for (const auto& [gpu, t] : suspensions_.gpus()) {
    std::vector<ProcessKey> orphans = suspensions_.orphans(gpu);
    if (orphans.empty()) continue;
    ++recoveries_;
    perform(now, scheduler_.recover(gpu, std::move(orphans)));
  }
}

}  // namespace gpreempt::sched
